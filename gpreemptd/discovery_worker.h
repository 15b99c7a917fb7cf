// The reading half of process discovery, on a thread of its own: every interval it lists the
// processes KFD knows (/sys/class/kfd/kfd/proc), reads the /proc facts of the new ones and
// classifies them (with their parent chain and container files) and hands them, with the exits, to
// its `deliver` function as a DiscoveryBatch; then it reads their queues' GPUs and those of a few
// known processes and delivers what changed as a second batch. The classes go first because sysfs
// reads can be slow (on the simulator each one is a round trip to kfdsimd, milliseconds under load)
// and /proc reads are not: a burst of new processes is classified after the listing alone, not
// after the pass's queue reads (docs/gpreemptd.md, "Measured"). It never touches the daemon's
// state: ProcessTracker applies the batches on the loop thread, which thereby never waits for
// /proc, sysfs or (on the simulator) kfdsimd's model ticks while it answers hints.
//
// Identity is sched::ProcessKey: a pid that reappears with another start time is a new process,
// the old one reported exited first. A new classifier (a SIGHUP reload) or new container roots
// are picked up at the start of the next pass, which re-classifies every process it knows and
// reports those whose class changed.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "container_resolver.h"
#include "discovery/process_discovery.h"
#include "sched/classifier.h"
#include "sched/process_description.h"
#include "sched/process_key.h"

namespace gpreemptd {

// What one pass read and classified of a process: its identity, its class and what the registry
// keeps as its description (the fields are the description's own, so a TrackedProcess is handed
// to the Runtime as one, sliced).
struct TrackedProcess : gpreempt::sched::ProcessDescription {
  gpreempt::sched::ProcessKey key;
  std::optional<std::string> class_name;  // nullopt: matched no class (left alone)
  std::vector<gpreempt::sched::GpuId> gpus() const;
  const gpreempt::sched::ProcessDescription& description() const { return *this; }
};

// What one pass found out. Exits come first: a reused pid's old process is in `exited` and its new
// one in `seen` of the same batch.
struct DiscoveryBatch {
  std::vector<gpreempt::sched::ProcessKey> exited;
  // New processes, and known ones whose GPUs or class changed: the whole record, classified.
  std::vector<TrackedProcess> seen;
  bool empty() const { return exited.empty() && seen.empty(); }
};

// Reads and classifies one process as a pass does (nullopt: gone, or unreadable: a pass tries it
// again). Throws what the classifier's file readers throw.
std::optional<TrackedProcess> read_tracked_process(const gpreempt::discovery::SystemRoots& roots,
                                                   int pid,
                                                   const gpreempt::sched::Classifier* classifier,
                                                   ContainerResolver* containers,
                                                   std::size_t* sysfs_reads = nullptr);

class DiscoveryWorker {
 public:
  using Deliver = std::function<void(DiscoveryBatch)>;
  using Classifier = std::shared_ptr<const gpreempt::sched::Classifier>;

  DiscoveryWorker(gpreempt::discovery::SystemRoots roots, std::chrono::nanoseconds interval);
  ~DiscoveryWorker();  // stops the thread
  DiscoveryWorker(const DiscoveryWorker&) = delete;
  DiscoveryWorker& operator=(const DiscoveryWorker&) = delete;

  // Any thread. The worker only ever reads the classifier it is given (hence const and shared: the
  // thread that replaces it never frees one a pass still uses).
  void set_classifier(Classifier classifier);
  // Any thread. The resolver is built and used on the worker's side only (its cache is not
  // shared); nullopt: container names are not resolved.
  void set_container_roots(std::optional<ContainerRoots> roots);

  // Any thread: a process read elsewhere (ProcessTracker::find) is known from the next pass on, so
  // its GPUs are followed and its exit reported even if it exits before a pass lists it.
  void adopt(TrackedProcess p);

  // A pass every interval (the first one interval from now: the caller has usually just done one
  // with pass()), each batch that is not empty handed to `deliver` on the worker thread.
  void start(Deliver deliver);
  void stop();
  // Any thread: start the next pass now rather than at the end of the interval.
  void wake();

  // One pass on the calling thread: for tests, and for the worker thread itself. Never call it
  // while the thread runs. With `early`, the exits and the new processes (classified, queues not
  // read yet) are handed to it before the pass reads any queue, and the pass returns the rest: the
  // new processes' whole records and what the revisits found. Without, one batch of it all.
  DiscoveryBatch pass(const Deliver& early = {});

  // Known processes looked at again per pass (new ones are all looked at): see pass().
  static constexpr std::size_t kRevisitsPerPass = 4;

  // Any thread: passes whose listing of the KFD's processes failed, and reads that found nothing
  // for want of file descriptors (the known processes are then kept as they were, not reported
  // exited or without queues).
  uint64_t listing_failures() const { return listing_failures_.load(std::memory_order_relaxed); }

 private:
  void main(Deliver deliver);
  // Look at one listed pid: new, changed GPUs, or a reused pid.
  void visit(int pid, DiscoveryBatch& out);
  // false (counted in listing_failures, logged now and then) when `error`, the errno of a read
  // that failed, says the daemon is out of file descriptors: the read then says nothing about
  // the process.
  bool reads_trustworthy(int error);
  // Reading pid's queues failed with `error`: counted as above, or logged.
  void queues_unreadable(int pid, int error);
  // A pass that could not list the KFD's processes (counted in listing_failures, logged now and
  // then): the processes known are kept.
  void listing_failed(int error);
  void listing_failed(const std::string& why);
  // A new pid, classified from its /proc facts, its queues not read: added to known_ and to
  // out.seen (true), or gone (false).
  bool admit(int pid, DiscoveryBatch& out);
  void reclassify_all(DiscoveryBatch& out);
  // What the last pass cost, logged at debug level by the thread.
  struct PassStats {
    std::size_t listed = 0, fresh = 0, revisited = 0, sysfs_reads = 0;
    std::chrono::nanoseconds listing{}, fresh_done{}, handed_over{}, total{};
  };
  static void log_pass(const PassStats& s);

  const gpreempt::discovery::SystemRoots roots_;
  const std::chrono::nanoseconds interval_;

  // Shared with the other threads.
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<uint64_t> listing_failures_{0};
  // A new classifier's reclassification that a failed listing put off to the next pass.
  bool reclassify_pending_ = false;
  bool stopping_ = false;
  bool woken_ = false;
  Classifier next_classifier_;
  uint64_t classifier_generation_ = 0;
  std::optional<std::optional<ContainerRoots>> next_containers_;
  std::vector<TrackedProcess> adopted_;

  // The worker's own (the thread running pass()).
  Classifier classifier_;
  uint64_t classified_generation_ = 0;
  std::unique_ptr<ContainerResolver> containers_;
  std::map<int, TrackedProcess> known_;
  int last_revisited_ = 0;
  PassStats stats_;  // the known process (with queues) the last pass looked at last
  std::thread thread_;
};

}  // namespace gpreemptd
