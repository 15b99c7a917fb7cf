#include "process_tracker.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>

#include "common/escape.h"
#include "process_facts_reader.h"

namespace gpreemptd {

namespace sched = gpreempt::sched;
namespace discovery = gpreempt::discovery;

ProcessTracker::ProcessTracker(gpreempt::EventLoop& loop, discovery::SystemRoots roots,
                               std::chrono::nanoseconds interval,
                               const sched::ProcessRegistry& registry, Sink sink)
    : loop_(loop),
      roots_(roots),
      registry_(registry),
      sink_(std::move(sink)),
      inbox_(loop),
      worker_(std::move(roots), interval) {}

ProcessTracker::~ProcessTracker() {
  worker_.stop();
}

void ProcessTracker::set_classifier(std::shared_ptr<const sched::Classifier> classifier) {
  classifier_ = classifier;
  worker_.set_classifier(std::move(classifier));
  worker_.wake();
}

void ProcessTracker::set_container_roots(std::optional<ContainerRoots> roots) {
  containers_ = roots ? std::make_unique<ContainerResolver>(
                            *roots, [](const std::string& w) { spdlog::warn("containers: {}", w); })
                      : nullptr;
  worker_.set_container_roots(std::move(roots));
}

void ProcessTracker::start() {
  // The first pass here, before the loop serves anyone: the daemon is ready (sd_notify) knowing
  // the GPU processes already running.
  try {
    scan();
  } catch (const std::exception& e) {
    // Not fatal: the worker's passes list again (and count what fails).
    spdlog::warn("process discovery: {}; trying again at the next pass", e.what());
  }
  worker_.start([this](DiscoveryBatch b) {
    inbox_.post([this, b = std::move(b)]() mutable { apply(std::move(b)); });
  });
}

void ProcessTracker::scan() {
  apply(worker_.pass());
}

void ProcessTracker::apply(DiscoveryBatch batch) {
  for (const auto& key : batch.exited)
    if (registry_.knows(key)) exited(key);
  for (auto& p : batch.seen) seen(std::move(p));
}

void ProcessTracker::seen(TrackedProcess p) {
  const sched::ProcessRecord* known = registry_.with_pid(p.key.pid);
  if (known && known->key != p.key) {
    // The pid was reused: the registry retires the old process when the new one arrives.
    spdlog::info("process {} exited (its pid now names {})", sched::to_string(known->key),
                 sched::to_string(p.key));
    known = nullptr;
  }
  if (!known) {
    // Another user's words, on their way to the journal and whoever reads it on a terminal.
    const std::string cmd = gpreempt::printable_command_line(p.cmdline);
    if (p.class_name)
      spdlog::info(
          "GPU process {} ({}) is class {} ({}{})", sched::to_string(p.key), cmd, *p.class_name,
          p.rule,
          p.inherited_from ? ", inherited from " + sched::to_string(*p.inherited_from) : "");
    else
      spdlog::info("GPU process {} ({}) matches no class: left alone", sched::to_string(p.key),
                   cmd);
    sink_(sched::event::ProcessAppeared{p.key, p.gpus()});
    sink_(sched::event::ProcessClassified{p.key, p.class_name, p.gpus(), p.description()});
    return;
  }
  const sched::ProcessDescription& was = known->description;
  if (p.read_at < was.read_at) return;  // read before what the registry holds (find()): stale
  if (!p.queues_read) {
    // A class without the queues (the worker's early hand-over, the pid known from find()
    // meanwhile): the GPUs the registry holds stand, as old as they were.
    p.queues = was.queues;
    p.queues_read = was.queues_read;
    p.read_at = was.read_at;
  }
  const bool class_changed = known->class_name != p.class_name;
  const bool gpus_changed = known->gpus != p.gpus();
  if (class_changed)
    spdlog::info("process {} ({}) reclassified: {} -> {}", p.key.pid, sched::to_string(p.key),
                 known->class_name.value_or("none"), p.class_name.value_or("none"));
  if (gpus_changed) {
    // Logged so that the time a process's GPUs became known can be measured (bench/gpreemptd).
    std::string ids;
    for (auto g : p.gpus()) ids += (ids.empty() ? "" : ", ") + std::to_string(g);
    spdlog::debug("GPU process {} now has queues on GPUs [{}]", sched::to_string(p.key), ids);
  }
  if (class_changed || gpus_changed || !p.description().says_the_same(was))
    sink_(sched::event::ProcessClassified{p.key, p.class_name, p.gpus(), p.description()});
}

void ProcessTracker::exited(const sched::ProcessKey& key) {
  spdlog::info("process {} exited", sched::to_string(key));
  sink_(sched::event::ProcessExited{key});
}

// The one place the loop thread reads /proc and sysfs for discovery, for the first message of a
// connection (hello, the first hint; Daemon::hint_peer remembers the answer) and `ctl --pid`:
// - a known pid: its stat file, so that a pid reused since the worker's last pass is not taken
//   for the process that had it;
// - a pid the worker has not reported yet (it opened /dev/kfd less than an interval ago): read and
//   classified here. Every line of the protocol is answered in order, at once, so the answer
//   cannot wait for the worker without parking the connection. It is bounded — one process and
//   its ancestors, once (the worker adopts the record; its reports read before it are stale).
// A known connection's hints, the path of every request, read nothing.
const sched::ProcessRecord* ProcessTracker::find(int pid) {
  const sched::ProcessRecord* known = registry_.with_pid(pid);
  if (known && read_process_key(roots_.proc, pid) == known->key) return known;
  if (pid == static_cast<int>(::getpid())) return nullptr;
  std::error_code ec;
  if (!std::filesystem::exists(roots_.kfd_sysfs + "/proc/" + std::to_string(pid), ec)) {
    if (known) exited(known->key);
    return nullptr;
  }
  std::optional<TrackedProcess> p;
  try {
    p = read_tracked_process(roots_, pid, classifier_.get(), containers_.get());
  } catch (const std::exception& e) {
    spdlog::warn("discovery of pid {} failed: {}; the worker tries again", pid, e.what());
  }
  worker_.wake();
  if (!p) return nullptr;
  // The worker follows it from now on, even if it exits before a pass lists it.
  worker_.adopt(*p);
  const sched::ProcessKey key = p->key;
  seen(std::move(*p));
  return registry_.find(key);
}

}  // namespace gpreemptd
