#include "process_tracker.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "process_facts_reader.h"

namespace gpreemptd {

namespace sched = gpreempt::sched;
namespace discovery = gpreempt::discovery;

std::vector<sched::GpuId> TrackedProcess::gpus() const {
  std::vector<sched::GpuId> out;
  for (const auto& [gpu, n] : queues) out.push_back(gpu);
  return out;
}

ProcessTracker::ProcessTracker(gpreempt::EventLoop& loop, discovery::SystemRoots roots,
                               std::chrono::nanoseconds interval, Sink sink)
    : loop_(loop), roots_(std::move(roots)), interval_(interval), sink_(std::move(sink)) {}

void ProcessTracker::set_classifier(const sched::Classifier& classifier) {
  classifier_ = &classifier;
  for (auto& [pid, p] : processes_) {
    const auto before = p.class_name;
    classify(p, false);
    if (p.class_name != before) {
      spdlog::info("process {} ({}) reclassified: {} -> {}", pid, sched::to_string(p.key),
                   before.value_or("none"), p.class_name.value_or("none"));
      sink_(sched::event::ProcessClassified{p.key, p.class_name, p.gpus()});
    }
  }
}

void ProcessTracker::start() {
  timer_ = loop_.add_timer([this] { scan(); });
  loop_.arm_every(timer_, interval_);
  scan();
}

void ProcessTracker::scan() {
  std::vector<int> listed = discovery::kfd_sysfs_processes(roots_);
  std::set<int> present(listed.begin(), listed.end());
  std::vector<int> gone;
  for (const auto& [pid, p] : processes_)
    if (!present.count(pid)) gone.push_back(pid);
  for (int pid : gone) exited(pid);
  // Each look at a process is 1 + 3 per queue sysfs reads (and /proc reads when it is new), all on
  // the loop thread that answers hints: a scan visits at most kVisitsPerScan of them, so a hint
  // waits for at most that many. New processes first (their class is what a hint needs), then the
  // known ones in turn, from where the last scan stopped.
  const int self = static_cast<int>(::getpid());
  std::vector<int> order, known;
  for (int pid : listed)
    if (pid != self) (processes_.count(pid) ? known : order).push_back(pid);
  auto next = std::upper_bound(known.begin(), known.end(), last_visited_);
  order.insert(order.end(), next, known.end());
  order.insert(order.end(), known.begin(), next);
  if (order.size() > kVisitsPerScan) order.resize(kVisitsPerScan);
  for (int pid : order) {
    if (processes_.count(pid)) last_visited_ = pid;
    visit_contained(pid);
  }
}

// One process's files must not stop the daemon: whatever reading or classifying it throws is
// logged and the process is looked at again by the next scan.
void ProcessTracker::visit_contained(int pid) {
  try {
    visit(pid);
  } catch (const std::exception& e) {
    spdlog::warn("discovery of pid {} failed: {}; trying again at the next scan", pid, e.what());
  }
}

const TrackedProcess* ProcessTracker::find(int pid) {
  auto it = processes_.find(pid);
  if (it != processes_.end() && read_process_key(roots_.proc, pid) == it->second.key)
    return &it->second;
  std::error_code ec;
  if (!std::filesystem::exists(roots_.kfd_sysfs + "/proc/" + std::to_string(pid), ec)) {
    if (it != processes_.end()) exited(pid);
    return nullptr;
  }
  visit_contained(pid);
  it = processes_.find(pid);
  return it == processes_.end() ? nullptr : &it->second;
}

void ProcessTracker::exited(int pid) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return;
  spdlog::info("process {} exited", sched::to_string(it->second.key));
  const sched::ProcessKey key = it->second.key;
  processes_.erase(it);
  sink_(sched::event::ProcessExited{key});
}

void ProcessTracker::visit(int pid) {
  // The daemon opens /dev/kfd itself (its context): it is nobody's target.
  if (pid == static_cast<int>(::getpid())) return;
  auto key = read_process_key(roots_.proc, pid);
  auto it = processes_.find(pid);
  if (!key) {  // listed by KFD but already gone from /proc
    if (it != processes_.end()) exited(pid);
    return;
  }
  if (it != processes_.end() && it->second.key != *key) {
    exited(pid);  // the pid was reused: the old process is gone
    it = processes_.end();
  }
  std::map<sched::GpuId, int> queues;
  for (const auto& q : discovery::sysfs_queues(roots_, pid)) ++queues[q.gpu_id];
  if (it != processes_.end()) {
    TrackedProcess& p = it->second;
    const bool gpus_changed = p.gpus() != [&] {
      std::vector<sched::GpuId> v;
      for (const auto& [g, n] : queues) v.push_back(g);
      return v;
    }();
    p.queues = std::move(queues);
    if (gpus_changed) {
      // Logged so that the time a process's GPUs became known can be measured (bench/gpreemptd).
      std::string ids;
      for (auto g : p.gpus()) ids += (ids.empty() ? "" : ", ") + std::to_string(g);
      spdlog::debug("GPU process {} now has queues on GPUs [{}]", sched::to_string(p.key), ids);
      sink_(sched::event::ProcessClassified{p.key, p.class_name, p.gpus()});
    }
    return;
  }
  TrackedProcess p;
  p.key = *key;
  p.queues = std::move(queues);
  auto [ins, ok] = processes_.emplace(pid, std::move(p));
  classify(ins->second, true);
}

void ProcessTracker::classify(TrackedProcess& p, bool announce) {
  auto facts = read_process_facts(roots_.proc, p.key.pid, containers_);
  if (!facts || facts->key != p.key) return;  // gone meanwhile: the next scan sees it
  p.cmdline = facts->cmdline;
  std::optional<sched::Classification> c;
  if (classifier_)
    c = classifier_->classify(*facts, read_ancestors(roots_.proc, *facts, containers_));
  p.class_name = c ? std::optional<std::string>(c->class_name) : std::nullopt;
  p.rule = c ? c->rule : "";
  p.inherited_from = c ? c->inherited_from : std::nullopt;
  if (!announce) return;
  std::string cmd;
  for (const auto& a : p.cmdline) cmd += (cmd.empty() ? "" : " ") + a;
  if (c)
    spdlog::info(
        "GPU process {} ({}) is class {} ({}{})", sched::to_string(p.key), cmd, c->class_name,
        c->rule,
        c->inherited_from ? ", inherited from " + sched::to_string(*c->inherited_from) : "");
  else
    spdlog::info("GPU process {} ({}) matches no class: left alone", sched::to_string(p.key), cmd);
  sink_(sched::event::ProcessAppeared{p.key, p.gpus()});
  sink_(sched::event::ProcessClassified{p.key, p.class_name, p.gpus()});
}

}  // namespace gpreemptd
