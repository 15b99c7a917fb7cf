// Tells the Runtime about GPU processes, on the loop thread: ProcessAppeared + ProcessClassified
// for a new one, ProcessClassified again when its GPUs, its class or what was read of it change,
// ProcessExited when it is gone. The finding and reading is DiscoveryWorker's, on its own thread
// (every `interval` it lists /sys/class/kfd/kfd/proc and reads and classifies what changed); its
// batches reach the loop thread through a LoopInbox and are applied here, so the loop never waits
// for /proc or sysfs on discovery's behalf. The one exception is find() of a pid discovery has not
// reported yet (below).
//
// It keeps no process table: it compares each report with the Runtime's registry (which its
// events update before sink() returns) and reads processes from there. A pid that reappears with
// another start time is a new process; the registry retires the old one when the new one arrives.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/event_loop.h"
#include "common/loop_inbox.h"
#include "container_resolver.h"
#include "discovery/process_discovery.h"
#include "discovery_worker.h"
#include "sched/classifier.h"
#include "sched/event.h"
#include "sched/process_registry.h"

namespace gpreemptd {

class ProcessTracker {
 public:
  using Sink = std::function<void(gpreempt::sched::Event)>;

  // `registry` is what `sink`'s events update (the Runtime's): it must outlive the tracker.
  ProcessTracker(gpreempt::EventLoop& loop, gpreempt::discovery::SystemRoots roots,
                 std::chrono::nanoseconds interval,
                 const gpreempt::sched::ProcessRegistry& registry, Sink sink);
  ~ProcessTracker();  // stops the worker before anything it posts to goes away
  ProcessTracker(const ProcessTracker&) = delete;
  ProcessTracker& operator=(const ProcessTracker&) = delete;

  // Classify with `classifier` from now on. The worker re-classifies every known process with it
  // at its next pass (within one interval); a changed class arrives as ProcessClassified.
  void set_classifier(std::shared_ptr<const gpreempt::sched::Classifier> classifier);
  // Resolve container names and pods under these runtime roots (nullopt: don't). Takes effect at
  // the worker's next pass, before its re-classification.
  void set_container_roots(std::optional<ContainerRoots> roots);

  // One pass now, on the calling thread (before the loop runs), then the worker's every interval.
  void start();
  // One pass on the calling thread, applied at once (tests; never while the worker runs).
  void scan();
  // The process with this pid. When discovery has not reported it yet (a hint can arrive before
  // the worker's next pass) it is read and classified here, on the caller's thread: see
  // docs/gpreemptd.md, "Process discovery". nullptr when it is no GPU process.
  const gpreempt::sched::ProcessRecord* find(int pid);
  const gpreempt::discovery::SystemRoots& roots() const { return roots_; }
  // Passes whose listing of the KFD's processes failed (DiscoveryWorker::listing_failures).
  uint64_t listing_failures() const { return worker_.listing_failures(); }

  // Applies one of the worker's batches (on the loop thread; public for tests). A record whose
  // queues were not read yet (TrackedProcess::queues_read) changes the class, never the GPUs.
  void apply(DiscoveryBatch batch);

 private:
  // A record from the worker (or find): new, a reused pid, or changed GPUs, class or description.
  void seen(TrackedProcess p);
  void exited(const gpreempt::sched::ProcessKey& key);

  gpreempt::EventLoop& loop_;
  gpreempt::discovery::SystemRoots roots_;
  const gpreempt::sched::ProcessRegistry& registry_;
  Sink sink_;
  // find()'s own: the worker's resolver and its cache are the worker thread's.
  std::shared_ptr<const gpreempt::sched::Classifier> classifier_;
  std::unique_ptr<ContainerResolver> containers_;
  gpreempt::LoopInbox inbox_;
  DiscoveryWorker worker_;  // last: destroyed (joined) first, while the inbox still exists
};

}  // namespace gpreemptd
