#include "discovery_worker.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

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

namespace {

std::map<sched::GpuId, int> queues_of(const discovery::SystemRoots& roots, int pid) {
  std::map<sched::GpuId, int> queues;
  for (const auto& q : discovery::sysfs_queues(roots, pid)) ++queues[q.gpu_id];
  return queues;
}

// Class, rule and cmdline of `p` from its /proc facts; false when it is gone (or no longer `p`).
bool classify(const discovery::SystemRoots& roots, TrackedProcess& p,
              const sched::Classifier* classifier, ContainerResolver* containers) {
  auto facts = read_process_facts(roots.proc, p.key.pid, containers);
  if (!facts || facts->key != p.key) return false;
  p.cmdline = facts->cmdline;
  std::optional<sched::Classification> c;
  if (classifier)
    c = classifier->classify(*facts, read_ancestors(roots.proc, *facts, containers));
  p.class_name = c ? std::optional<std::string>(c->class_name) : std::nullopt;
  p.rule = c ? c->rule : "";
  p.inherited_from = c ? c->inherited_from : std::nullopt;
  return true;
}

ContainerResolver::Warn container_warning() {
  return [](const std::string& w) { spdlog::warn("containers: {}", w); };
}

}  // namespace

std::optional<TrackedProcess> read_tracked_process(const discovery::SystemRoots& roots, int pid,
                                                   const sched::Classifier* classifier,
                                                   ContainerResolver* containers) {
  auto key = read_process_key(roots.proc, pid);
  if (!key) return std::nullopt;
  TrackedProcess p;
  p.key = *key;
  p.queues = queues_of(roots, pid);
  if (!classify(roots, p, classifier, containers)) return std::nullopt;
  return p;
}

DiscoveryWorker::DiscoveryWorker(discovery::SystemRoots roots, std::chrono::nanoseconds interval)
    : roots_(std::move(roots)), interval_(interval) {}

DiscoveryWorker::~DiscoveryWorker() { stop(); }

void DiscoveryWorker::set_classifier(Classifier classifier) {
  std::lock_guard lock(mu_);
  next_classifier_ = std::move(classifier);
  ++classifier_generation_;
}

void DiscoveryWorker::set_container_roots(std::optional<ContainerRoots> roots) {
  std::lock_guard lock(mu_);
  next_containers_ = std::move(roots);
}

void DiscoveryWorker::start(Deliver deliver) {
  thread_ = std::thread([this, d = std::move(deliver)]() mutable { main(std::move(d)); });
}

void DiscoveryWorker::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DiscoveryWorker::wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

void DiscoveryWorker::main(Deliver deliver) {
  for (;;) {
    {
      std::unique_lock lock(mu_);
      // The interval counts from the end of a pass: a slow pass (a loaded machine, a busy
      // simulator) spaces the next one out rather than running them back to back.
      cv_.wait_for(lock, interval_, [this] { return stopping_ || woken_; });
      if (stopping_) return;
      woken_ = false;
    }
    DiscoveryBatch batch;
    try {
      batch = pass();
    } catch (const std::exception& e) {
      // Listing /sys/class/kfd/kfd/proc failed (one process's files are contained in visit):
      // nothing is lost, the next pass lists again.
      spdlog::warn("process discovery: {}; trying again at the next pass", e.what());
    }
    if (!batch.empty()) deliver(std::move(batch));
  }
}

DiscoveryBatch DiscoveryWorker::pass() {
  bool reclassify = false;
  {
    std::lock_guard lock(mu_);
    woken_ = false;  // this pass is what a wake() before it asked for
    if (next_containers_) {
      containers_ = *next_containers_
                        ? std::make_unique<ContainerResolver>(**next_containers_, container_warning())
                        : nullptr;
      next_containers_.reset();
    }
    if (classified_generation_ != classifier_generation_) {
      classifier_ = next_classifier_;
      classified_generation_ = classifier_generation_;
      reclassify = true;
    }
  }
  DiscoveryBatch out;
  const std::vector<int> listed = discovery::kfd_sysfs_processes(roots_);
  const std::set<int> present(listed.begin(), listed.end());
  for (auto it = known_.begin(); it != known_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    out.exited.push_back(it->second.key);
    it = known_.erase(it);
  }
  if (reclassify) reclassify_all(out);
  // Every listed process at every pass: this thread answers nobody, so nothing bounds a pass but
  // its own cost (per known process one stat and 1 + 3 per queue sysfs reads; new ones also
  // their /proc facts and ancestors').
  const int self = static_cast<int>(::getpid());
  for (int pid : listed) {
    // The daemon opens /dev/kfd itself (its context): it is nobody's target.
    if (pid == self) continue;
    // One process's files must not stop discovery: whatever reading or classifying it throws is
    // logged and the process is looked at again by the next pass.
    try {
      visit(pid, out);
    } catch (const std::exception& e) {
      spdlog::warn("discovery of pid {} failed: {}; trying again at the next pass", pid, e.what());
    }
  }
  return out;
}

void DiscoveryWorker::reclassify_all(DiscoveryBatch& out) {
  for (auto& [pid, p] : known_) {
    TrackedProcess next = p;
    try {
      if (!classify(roots_, next, classifier_.get(), containers_.get())) continue;  // gone: visit
    } catch (const std::exception& e) {
      spdlog::warn("reclassifying pid {} failed: {}; it keeps its class", pid, e.what());
      continue;
    }
    const bool changed = next.class_name != p.class_name || next.rule != p.rule ||
                         next.inherited_from != p.inherited_from;
    p = std::move(next);
    if (changed) out.seen.push_back(p);
  }
}

void DiscoveryWorker::visit(int pid, DiscoveryBatch& out) {
  auto key = read_process_key(roots_.proc, pid);
  auto it = known_.find(pid);
  if (!key) {  // listed by KFD but already gone from /proc
    if (it != known_.end()) {
      out.exited.push_back(it->second.key);
      known_.erase(it);
    }
    return;
  }
  if (it != known_.end() && it->second.key != *key) {
    out.exited.push_back(it->second.key);  // the pid was reused: the old process is gone
    known_.erase(it);
    it = known_.end();
  }
  if (it != known_.end()) {
    TrackedProcess& p = it->second;
    auto queues = queues_of(roots_, pid);
    const bool gpus_changed = [&] {
      if (queues.size() != p.queues.size()) return true;
      for (auto a = queues.begin(), b = p.queues.begin(); a != queues.end(); ++a, ++b)
        if (a->first != b->first) return true;
      return false;
    }();
    p.queues = std::move(queues);
    if (gpus_changed) out.seen.push_back(p);
    return;
  }
  auto p = read_tracked_process(roots_, pid, classifier_.get(), containers_.get());
  if (!p || p->key != *key) return;  // gone meanwhile: the next pass sees it
  out.seen.push_back(*p);
  known_.emplace(pid, std::move(*p));
}

}  // namespace gpreemptd
