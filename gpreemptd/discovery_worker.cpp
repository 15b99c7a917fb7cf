#include "discovery_worker.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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

// Only each queue's GPU is read (1 + one file per queue): on the simulator every sysfs read is a
// round trip to kfdsimd, and a pass's reads are what delays its new processes. `reads` counts them.
// *error: the errno of a read that failed (the answer is then to be ignored), or 0.
std::map<sched::GpuId, int> queues_of(const discovery::SystemRoots& roots, int pid,
                                      std::size_t* reads, int* error) {
  std::map<sched::GpuId, int> queues;
  const auto listed = discovery::sysfs_queue_gpus(roots, pid, nullptr, error);
  if (*error) return queues;
  for (const auto& q : listed) ++queues[q.gpu_id];
  if (reads) *reads += 1 + listed.size();
  return queues;
}

// Class, rule and cmdline of `p` from its /proc facts; false when it is gone (or no longer `p`).
bool classify(const discovery::SystemRoots& roots, TrackedProcess& p,
              const sched::Classifier* classifier, ContainerResolver* containers) {
  auto facts = read_process_facts(roots.proc, p.key.pid, containers);
  if (!facts || facts->key != p.key) return false;
  p.cmdline = facts->cmdline;
  p.uid = facts->uid;
  std::optional<sched::Classification> c;
  if (classifier) c = classifier->classify(*facts, read_ancestors(roots.proc, *facts, containers));
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
                                                   ContainerResolver* containers,
                                                   std::size_t* sysfs_reads) {
  const auto read_at = std::chrono::steady_clock::now();
  auto key = read_process_key(roots.proc, pid);
  if (!key) return std::nullopt;
  TrackedProcess p;
  p.key = *key;
  p.read_at = read_at;
  int error = 0;
  p.queues = queues_of(roots, pid, sysfs_reads, &error);
  if (error) return std::nullopt;  // unreadable now: a pass tries again
  if (!classify(roots, p, classifier, containers)) return std::nullopt;
  return p;
}

DiscoveryWorker::DiscoveryWorker(discovery::SystemRoots roots, std::chrono::nanoseconds interval)
    : roots_(std::move(roots)), interval_(interval) {}

DiscoveryWorker::~DiscoveryWorker() {
  stop();
}

void DiscoveryWorker::set_classifier(Classifier classifier) {
  std::lock_guard lock(mu_);
  next_classifier_ = std::move(classifier);
  ++classifier_generation_;
}

void DiscoveryWorker::set_container_roots(std::optional<ContainerRoots> roots) {
  std::lock_guard lock(mu_);
  next_containers_ = std::move(roots);
}

void DiscoveryWorker::adopt(TrackedProcess p) {
  std::lock_guard lock(mu_);
  adopted_.push_back(std::move(p));
}

void DiscoveryWorker::start(Deliver deliver) {
  // spdlog's registry is a function-local static, made by whichever thread logs first. Make it
  // here, before the worker exists: when the worker and its starter both log for the first time
  // at once, the registry's thread-safe initialisation happens inside libspdlog, which
  // ThreadSanitizer does not see, and it reports the worker's first log line as a race.
  spdlog::default_logger_raw();
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
  // Passes start every interval (the first one interval from now); one that overruns it is
  // followed at once by the next, as a periodic timer would have it.
  auto next = std::chrono::steady_clock::now() + interval_;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait_until(lock, next, [this] { return stopping_ || woken_; });
      if (stopping_) return;
    }
    const auto started = std::chrono::steady_clock::now();
    if (started >= next) next = std::max(next + interval_, started);  // not a wake()'s early pass
    DiscoveryBatch batch;
    try {
      batch = pass(deliver);
      log_pass(stats_);
    } catch (const std::exception& e) {
      // What a process's files throw is contained in visit; this is anything else (memory).
      listing_failed(e.what());
    }
    if (!batch.empty()) deliver(std::move(batch));
  }
}

DiscoveryBatch DiscoveryWorker::pass(const Deliver& early) {
  bool reclassify = reclassify_pending_;
  reclassify_pending_ = false;
  std::vector<TrackedProcess> adopted;
  {
    std::lock_guard lock(mu_);
    woken_ = false;  // this pass is what a wake() before it asked for
    adopted.swap(adopted_);
    if (next_containers_) {
      containers_ = *next_containers_ ? std::make_unique<ContainerResolver>(**next_containers_,
                                                                            container_warning())
                                      : nullptr;
      next_containers_.reset();
    }
    if (classified_generation_ != classifier_generation_) {
      classifier_ = next_classifier_;
      classified_generation_ = classifier_generation_;
      reclassify = true;
    }
  }
  // Read after what this side knew of the pid: the newer record (a reused pid's old process the
  // loop has already reported exited).
  for (auto& p : adopted) {
    auto it = known_.find(p.key.pid);
    if (it == known_.end() || it->second.key != p.key) known_[p.key.pid] = std::move(p);
  }
  DiscoveryBatch out;
  stats_ = {};
  const auto started = std::chrono::steady_clock::now();
  int listing_error = 0;
  const std::vector<int> listed = discovery::kfd_sysfs_processes(roots_, &listing_error);
  if (listing_error) {
    // Nothing is lost: the processes known are kept, and the next pass lists again (and
    // reclassifies them, if a new classifier came with this one).
    listing_failed(listing_error);
    reclassify_pending_ = reclassify;
    return out;
  }
  stats_.listed = listed.size();
  stats_.sysfs_reads = 1;
  stats_.listing = std::chrono::steady_clock::now() - started;
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
  const int self = static_cast<int>(::getpid());
  auto visit_contained = [&](int pid) {
    // One process's files must not stop discovery: whatever reading or classifying it throws is
    // logged and the process is looked at again by the next pass.
    try {
      visit(pid, out);
    } catch (const std::exception& e) {
      spdlog::warn("discovery of pid {} failed: {}; trying again at the next pass", pid, e.what());
    }
  };
  // Every new process, however many started together (a pass answers nobody, so nothing but its
  // own cost bounds it). The daemon opens /dev/kfd itself (its context): it is nobody's target.
  std::vector<int> known_listed, new_pids;
  for (int pid : listed)
    if (pid != self) (known_.count(pid) ? known_listed : new_pids).push_back(pid);
  // Their classes first, from /proc alone (real files, cheap even under the simulator), handed
  // over before any of their queues is read: a burst of new processes is classified after one
  // sysfs read (the listing) rather than after all the queue reads of the pass.
  std::vector<std::pair<int, std::size_t>> fresh;  // pid, its record's index in out.seen
  for (int pid : new_pids) {
    try {
      if (admit(pid, out)) fresh.emplace_back(pid, out.seen.size() - 1);
    } catch (const std::exception& e) {
      spdlog::warn("discovery of pid {} failed: {}; trying again at the next pass", pid, e.what());
    }
  }
  stats_.fresh = fresh.size();
  if (early) {
    if (!out.empty()) early(std::move(out));
    out = {};
    stats_.handed_over = std::chrono::steady_clock::now() - started;
  }
  // Then their GPUs: the rest of the record, in this pass's batch (with an early hand-over, a
  // second delivery of the same pass; without, the records handed over later in one piece).
  for (const auto& [pid, at] : fresh) {
    auto it = known_.find(pid);
    if (it == known_.end()) continue;
    TrackedProcess& p = it->second;
    p.read_at = std::chrono::steady_clock::now();
    int error = 0;
    p.queues = queues_of(roots_, pid, &stats_.sysfs_reads, &error);
    if (error) queues_unreadable(pid, error);  // looked at again by the next pass
    p.queues_read = true;
    if (early)
      out.seen.push_back(p);
    else
      out.seen[at] = p;
  }
  stats_.fresh_done = std::chrono::steady_clock::now() - started;
  // Known processes are looked at again for changed GPUs (and a reused pid), kRevisitsPerPass per
  // pass: those without queues yet first (a process is often listed before its first queue
  // exists, and its GPU is what the scheduler waits for), then the others in turn from where the
  // last pass stopped. Each look costs 1 + 1 per queue sysfs reads, and on the simulator each
  // read waits for a model tick: a pass that re-read every process would delay the next pass, and
  // with it the new processes it finds.
  std::vector<int> order, with_queues;
  for (int pid : known_listed) {
    auto it = known_.find(pid);
    (it != known_.end() && it->second.queues.empty() ? order : with_queues).push_back(pid);
  }
  std::sort(with_queues.begin(), with_queues.end());
  auto from = std::upper_bound(with_queues.begin(), with_queues.end(), last_revisited_);
  order.insert(order.end(), from, with_queues.end());
  order.insert(order.end(), with_queues.begin(), from);
  if (order.size() > kRevisitsPerPass) order.resize(kRevisitsPerPass);
  for (int pid : order) {
    if (auto it = known_.find(pid); it != known_.end() && !it->second.queues.empty())
      last_revisited_ = pid;
    visit_contained(pid);
  }
  stats_.revisited = order.size();
  stats_.total = std::chrono::steady_clock::now() - started;
  if (!early) stats_.handed_over = stats_.total;  // the whole batch, at the end of the pass
  return out;
}

void DiscoveryWorker::log_pass(const PassStats& s) {
  if (!s.fresh && !s.revisited) return;
  auto ms = [](std::chrono::nanoseconds d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  // Where a pass's time goes (bench/gpreemptd/classify_latency.py summarises these lines).
  spdlog::debug(
      "discovery pass: {} listed, {} new, {} revisited, {} sysfs reads, {:.2f} ms; new "
      "processes read by {:.2f} ms, their classes handed over at {:.2f} ms (listing {:.2f} ms)",
      s.listed, s.fresh, s.revisited, s.sysfs_reads, ms(s.total), ms(s.fresh_done),
      ms(s.handed_over), ms(s.listing));
}

void DiscoveryWorker::reclassify_all(DiscoveryBatch& out) {
  for (auto& [pid, p] : known_) {
    TrackedProcess next = p;
    next.read_at = std::chrono::steady_clock::now();
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

void DiscoveryWorker::listing_failed(const std::string& why) {
  // Logged once per 1000 while it lasts (a pass every interval).
  const uint64_t n = listing_failures_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n == 1 || n % 1000 == 0)
    spdlog::warn("process discovery: {}; the processes known are kept, trying again at the next "
                 "pass ({} failed passes so far)",
                 why, n);
}

void DiscoveryWorker::listing_failed(int error) {
  listing_failed("cannot list " + roots_.kfd_sysfs + "/proc: " + std::strerror(error));
}

bool DiscoveryWorker::reads_trustworthy(int error) {
  // Out of descriptors, every read fails as if the process or its queues were gone. Decided from
  // the failed read's own errno: a probe made after it races with the descriptors other threads
  // free meanwhile (a refused peer's), and would report a live process exited.
  if (error != EMFILE && error != ENFILE) return true;
  const uint64_t n = listing_failures_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n == 1 || n % 1000 == 0)
    spdlog::warn("process discovery: out of file descriptors; the processes known are kept as "
                 "they were ({} failed reads so far)",
                 n);
  return false;
}

void DiscoveryWorker::queues_unreadable(int pid, int error) {
  if (reads_trustworthy(error))
    spdlog::warn("reading the queues of pid {} failed: {}; trying again at the next pass", pid,
                 std::strerror(error));
}

void DiscoveryWorker::visit(int pid, DiscoveryBatch& out) {
  const auto read_at = std::chrono::steady_clock::now();
  errno = 0;
  auto key = read_process_key(roots_.proc, pid);
  auto it = known_.find(pid);
  if (!key) {  // listed by KFD but already gone from /proc
    if (!reads_trustworthy(errno)) return;
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
    int error = 0;
    auto queues = queues_of(roots_, pid, &stats_.sysfs_reads, &error);
    if (error) {  // the GPUs it had are kept; the next pass reads again
      queues_unreadable(pid, error);
      return;
    }
    const bool gpus_changed = [&] {
      if (queues.size() != p.queues.size()) return true;
      for (auto a = queues.begin(), b = p.queues.begin(); a != queues.end(); ++a, ++b)
        if (a->first != b->first) return true;
      return false;
    }();
    p.queues = std::move(queues);
    p.read_at = read_at;
    if (gpus_changed) out.seen.push_back(p);
    return;
  }
  // Not known (a reused pid's new process): classified and read in one piece.
  auto p =
      read_tracked_process(roots_, pid, classifier_.get(), containers_.get(), &stats_.sysfs_reads);
  if (!p || p->key != *key) return;  // gone meanwhile: the next pass sees it
  out.seen.push_back(*p);
  known_.emplace(pid, std::move(*p));
}

bool DiscoveryWorker::admit(int pid, DiscoveryBatch& out) {
  const auto read_at = std::chrono::steady_clock::now();
  auto key = read_process_key(roots_.proc, pid);
  if (!key) return false;  // listed by KFD but already gone from /proc
  TrackedProcess p;
  p.key = *key;
  p.read_at = read_at;
  p.queues_read = false;
  if (!classify(roots_, p, classifier_.get(), containers_.get())) return false;  // gone meanwhile
  out.seen.push_back(p);
  known_.emplace(pid, std::move(p));
  return true;
}

}  // namespace gpreemptd
