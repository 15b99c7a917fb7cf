// Finds GPU processes and tells the scheduler about them. Every `interval` it lists the processes
// KFD knows (/sys/class/kfd/kfd/proc), forgets those gone, and looks at no more than
// kVisitsPerScan of the rest (new ones first): reads the facts of new ones from /proc, classifies them
// (with their parent chain, so a class covers process trees) and emits ProcessAppeared +
// ProcessClassified; it re-sends ProcessClassified when the GPUs a process uses change, and
// ProcessExited when it is gone. Identity is sched::ProcessKey: a pid that reappears with another
// start time is a new process (the old one exits first).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/event_loop.h"
#include "container_resolver.h"
#include "discovery/process_discovery.h"
#include "sched/classifier.h"
#include "sched/event.h"

namespace gpreemptd {

struct TrackedProcess {
  gpreempt::sched::ProcessKey key;
  std::vector<std::string> cmdline;
  std::optional<std::string> class_name;         // nullopt: matched no class (left alone)
  std::string rule;                              // the rule that matched (MatchRule::describe)
  // The ancestor whose rule gave the class (class covers process trees); nullopt: its own rule.
  std::optional<gpreempt::sched::ProcessKey> inherited_from;
  std::map<gpreempt::sched::GpuId, int> queues;  // queues per GPU (sysfs)
  std::vector<gpreempt::sched::GpuId> gpus() const;
};

class ProcessTracker {
 public:
  using Sink = std::function<void(gpreempt::sched::Event)>;

  ProcessTracker(gpreempt::EventLoop& loop, gpreempt::discovery::SystemRoots roots,
                 std::chrono::nanoseconds interval, Sink sink);
  ProcessTracker(const ProcessTracker&) = delete;
  ProcessTracker& operator=(const ProcessTracker&) = delete;

  // Classify with `classifier` from now on (must outlive its use), re-classifying every known
  // process; a changed class is sent as ProcessClassified.
  void set_classifier(const gpreempt::sched::Classifier& classifier);
  // Resolve container names and pods with `containers` (must outlive its use; nullptr: don't).
  void set_container_resolver(ContainerResolver* containers) { containers_ = containers; }
  // At most this many listed processes are looked at per scan (exits are seen at every scan).
  static constexpr std::size_t kVisitsPerScan = 4;

  // Scan now and then every interval.
  void start();
  void scan();
  // The process with this pid; when it is not known yet (a hint can arrive before the next scan)
  // it is looked at now. nullptr when it is no GPU process.
  const TrackedProcess* find(int pid);
  const std::map<int, TrackedProcess>& processes() const { return processes_; }
  const gpreempt::discovery::SystemRoots& roots() const { return roots_; }

 private:
  // Look at one listed pid: new, changed GPUs, or a reused pid.
  void visit(int pid);
  void visit_contained(int pid);
  void classify(TrackedProcess& p, bool announce);
  void exited(int pid);

  gpreempt::EventLoop& loop_;
  gpreempt::discovery::SystemRoots roots_;
  std::chrono::nanoseconds interval_;
  Sink sink_;
  const gpreempt::sched::Classifier* classifier_ = nullptr;
  ContainerResolver* containers_ = nullptr;
  gpreempt::EventLoop::Id timer_ = 0;
  std::map<int, TrackedProcess> processes_;
  int last_visited_ = 0;  // the known process the last scan looked at last
};

}  // namespace gpreemptd
