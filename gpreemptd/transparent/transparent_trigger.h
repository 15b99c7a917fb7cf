// gpreemptd's transparent trigger: notices that an unmodified process submitted GPU work, and that
// its queues drained, by polling the read/write dispatch ids of its queues from outside — no
// LD_PRELOAD, no ptrace attach (docs/transparent.md). Queue addresses come from debugfs `mqds`
// (root); the pointers are read with one process_vm_readv per process and poll. What the samples
// mean (a request began, a kernel ran, the queues drained) is decided by the sched::Runtime's
// ActivityDetector, which the DES feeds too. Everything runs on the daemon's EventLoop thread.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/event_loop.h"
#include "discovery/queue_pointers.h"
#include "sched/activity_detector.h"
#include "sched/event.h"
#include "sched/process_key.h"

namespace gpreemptd {

namespace sched = gpreempt::sched;
namespace discovery = gpreempt::discovery;
using gpreempt::EventLoop;

struct TransparentTriggerConfig {
  static constexpr std::chrono::microseconds kMinPollInterval{100};
  static constexpr std::chrono::microseconds kMaxPollInterval{500};

  // How often every watched process's pointers are read (kMinPollInterval..kMaxPollInterval).
  std::chrono::nanoseconds poll_interval = std::chrono::microseconds(200);
  // How often each process's queue list (/sys/class/kfd/kfd/proc/PID/queues, cheap, root-free) is
  // compared with the queues being polled; a change re-reads the addresses from debugfs. Runtimes
  // create queues lazily (PyTorch), so a process may start with none.
  std::chrono::nanoseconds queue_check_interval = std::chrono::milliseconds(50);
  discovery::QueuePointerSources sources;
  // The time of each sample, in the daemon's sched::Time; default steady_clock.
  std::function<sched::Time()> clock;
  // Notes and errors, one sentence each (the daemon logs them).
  std::function<void(const std::string&)> log;
  // A process stopped being watched on its own: exited (ESRCH), pid reused, or unreadable.
  std::function<void(const sched::ProcessKey&, const std::string& why)> on_unwatched;
};

class TransparentTrigger {
 public:
  // Where the samples go (sched::Runtime::queues_sampled and queues_unwatched in gpreemptd).
  struct Sink {
    // The pointers of every queue of `key`, read at the time given.
    std::function<void(sched::Time, const sched::ProcessKey&,
                       const std::vector<sched::QueueActivitySample>&)>
        sampled;
    // `key` is no longer read (unwatch(), or it exited or became unreadable).
    std::function<void(sched::Time, const sched::ProcessKey&)> unwatched;
  };

  // Throws std::invalid_argument for a poll interval outside the allowed range, or a sink
  // missing either function.
  TransparentTrigger(EventLoop& loop, TransparentTriggerConfig config, Sink sink);
  ~TransparentTrigger();
  TransparentTrigger(const TransparentTrigger&) = delete;
  TransparentTrigger& operator=(const TransparentTrigger&) = delete;

  // Follow `pid` (the host pid) as `key`; its queue addresses are read now, and again whenever
  // its queue list changes. A process without queues yet is fine. Throws gpreempt::Error: ESRCH
  // when the pid is gone or is another process than `key` (start time differs), or the debugfs
  // error (EACCES: debugfs needs root). Watching a key again re-reads its queues.
  void watch(const sched::ProcessKey& key, int pid);
  // Stop following `key` (the sink's `unwatched` is told).
  void unwatch(const sched::ProcessKey& key);
  // A reloaded config's interval (kMinPollInterval..kMaxPollInterval, else std::invalid_argument);
  // the next poll is one new interval from now.
  void set_poll_interval(std::chrono::nanoseconds interval);
  std::chrono::nanoseconds poll_interval() const { return config_.poll_interval; }
  // The queues of `pid` changed (the daemon saw it in a queue snapshot or an event): re-read
  // their addresses now rather than at the next queue check.
  void refresh(int pid);

  bool watching(const sched::ProcessKey& key) const { return watched_.count(key) != 0; }
  // Queues being polled for `key` (0 when not watched).
  std::size_t queue_count(const sched::ProcessKey& key) const;
  // How `key`'s pointers are read: empty for process_vm_readv, else why /proc/PID/mem is used.
  std::string read_method_note(const sched::ProcessKey& key) const;
  const TransparentTriggerConfig& config() const { return config_; }

  struct Stats {
    uint64_t polls = 0;          // timer expirations handled
    uint64_t samples = 0;        // per-process pointer reads that succeeded
    uint64_t read_errors = 0;    // per-process reads that failed
    uint64_t address_reads = 0;  // debugfs mqds reads (watch, refresh, queue-list changes)
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Watched {
    int pid = 0;
    std::unique_ptr<discovery::PointerReader> reader;
    std::vector<std::string> sysfs_queue_ids;  // as last listed
    sched::Time next_check{0};
    std::string last_error;  // logged once until it changes
  };

  sched::Time now() const;
  void poll();
  void load_addresses(const sched::ProcessKey& key, Watched& w);
  // Re-lists the queue directory and the pid's start time; false when the process is gone.
  bool check(const sched::ProcessKey& key, Watched& w);
  void drop(const sched::ProcessKey& key, const std::string& why);
  void note(const std::string& s) const;
  void update_timer();

  EventLoop& loop_;
  TransparentTriggerConfig config_;
  Sink sink_;
  EventLoop::Id timer_ = 0;
  bool timer_armed_ = false;
  std::map<sched::ProcessKey, Watched> watched_;
  Stats stats_;
  // Reused by every poll, so a poll allocates nothing while no event is emitted.
  std::vector<sched::ProcessKey> poll_keys_;
  std::vector<sched::QueueActivitySample> activity_;
};

}  // namespace gpreemptd
