#include "sim/gpu/gpu_hardware.h"

#include "sim/device/gpu_geometry.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <fstream>
#include <map>
#include <utility>
#include <vector>
#include <stdexcept>

#include "common/error.h"
#include "sim/gpu/aql.h"
#include "sim/gpu/doorbell_watcher.h"
#include "sim/gpu/gpu_model.h"
#include "sim/gpu/model_config.h"
#include "sim/protocol/machine_paths.h"

namespace gpreempt::sim::gpu {

namespace {

using daemon::Clock;

// How often the CP looks at the write pointers of its queues (CP_HQD_PQ_WPTR_POLL): a dispatch
// whose runtime only stores its doorbell (ROCr) is noticed at most this late; one that also wakes
// the doorbell's futex (simrt) at once, through the DoorbellWatcher.
constexpr std::chrono::microseconds kPollPeriod{250};

class GpuHardware final : public daemon::Hardware {
 public:
  GpuHardware(GpuModelOptions options, std::string stats_path)
      : model_(std::make_shared<GpuModel>(std::move(options), memory_)),
        stats_path_(std::move(stats_path)),
        epoch_(Clock::now()) {
    model_->set_clock([epoch = epoch_] {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - epoch).count();
    });
  }

  std::shared_ptr<Hws> hws() override { return model_; }

  // The write pointers carry everything a doorbell write announces, so the CP polls them; the
  // doorbell pages are watched only so that a runtime that wakes its doorbell's futex (simrt) is
  // seen at once instead of at the next poll (doorbell_watcher.h).
  void doorbell_mapped(int pid, uint32_t gpu_id, volatile void* page, std::size_t bytes) override {
    pages_[{pid, gpu_id}] = {page, bytes};
    rewatch();
  }
  void doorbell_unmapped(int pid, uint32_t gpu_id) override {
    pages_.erase({pid, gpu_id});
    rewatch();  // before the daemon unmaps the page: the watcher no longer reads it
  }
  int wake_fd() const override { return watcher_.fd(); }
  void woken() override { watcher_.drain(); }

  std::optional<Clock::time_point> next_tick() override {
    std::optional<Clock::time_point> t;
    if (auto ev = model_->next_event_time()) t = epoch_ + std::chrono::nanoseconds(*ev);
    if (model_->has_queues()) {
      const auto poll = last_poll_ + kPollPeriod;
      if (!t || poll < *t) t = poll;
    }
    return t;
  }

  void tick(Clock::time_point now) override {
    const SimTime t = std::chrono::duration_cast<std::chrono::nanoseconds>(now - epoch_).count();
    model_->advance_to(t);
    model_->poll();
    last_poll_ = now;
    for (int pid : model_->take_signalled()) ring_bells(pid);
    rewatch();  // queues come and go through the KFD calls each followed by a tick
  }

  std::vector<int> take_event_interrupts() override {
    auto pids = model_->take_interrupted();
    return {pids.begin(), pids.end()};
  }

  std::optional<std::string> stats_json(uint64_t since_seq, std::size_t max_records) const override {
    return model_->stats_json(since_seq, max_records).dump();
  }

  void stopping() override {
    if (stats_path_.empty()) return;
    const std::string tmp = stats_path_ + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      if (!out) return;  // the machine directory is gone: nobody is left to read it
      out << model_->stats_json().dump(1) << '\n';
    }
    std::rename(tmp.c_str(), stats_path_.c_str());
  }

 private:
  // Completion signals of `pid` were written: wake whoever of it sleeps on its bell (aql.h).
  void ring_bells(int pid) {
    auto views = model_->queue_views();
    for (auto it = pages_.lower_bound({pid, 0}); it != pages_.end() && it->first.first == pid; ++it) {
      if (it->second.bytes < aql::kCompletionBellOffset + sizeof(uint64_t)) continue;
      const uint32_t gpu_id = it->first.second;
      const bool taken = std::any_of(views.begin(), views.end(), [&](const QueueView& q) {
        return q.pid == pid && q.gpu_id == gpu_id && q.doorbell_id == aql::kCompletionBellDoorbell;
      });
      if (taken) continue;  // a queue's doorbell: not ours to write
      auto* bell = const_cast<uint32_t*>(reinterpret_cast<volatile uint32_t*>(
          static_cast<volatile char*>(it->second.page) + aql::kCompletionBellOffset));
      std::atomic_ref<uint32_t>(*bell).fetch_add(1, std::memory_order_release);
      syscall(SYS_futex, bell, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
    }
  }

  void rewatch() {
    std::vector<const volatile uint32_t*> words;
    for (const QueueView& q : model_->queue_views()) {
      auto it = pages_.find({q.pid, q.gpu_id});
      if (it == pages_.end()) continue;
      const std::size_t off = std::size_t{q.doorbell_id} * sizeof(uint64_t);
      if (off + sizeof(uint64_t) > it->second.bytes) continue;
      // The low half of the 64-bit doorbell (little-endian): what the runtime's FUTEX_WAKE names.
      words.push_back(reinterpret_cast<const volatile uint32_t*>(
          static_cast<const volatile char*>(it->second.page) + off));
    }
    if (words == watched_) return;
    watched_ = words;
    watcher_.watch(std::move(words));
  }

  struct Page {
    volatile void* page;
    std::size_t bytes;
  };
  ProcessVmMemory memory_;
  std::shared_ptr<GpuModel> model_;
  std::string stats_path_;
  Clock::time_point epoch_;
  Clock::time_point last_poll_{};
  std::map<std::pair<int, uint32_t>, Page> pages_;  // (pid, gpu_id) -> its doorbell page(s)
  std::vector<const volatile uint32_t*> watched_;
  DoorbellWatcher watcher_;
};

}  // namespace

std::unique_ptr<daemon::Hardware> make_gpu_hardware(
    const DeviceProfile& profile, const std::function<const char*(const char*)>& getenv) {
  std::map<std::string, std::string> env;
  for (const char* k : kModelEnvVars)
    if (const char* v = getenv(k)) env[k] = v;
  if (!env.count("GPREEMPT_SIM_PROFILE") && profile_by_name(profile.name))
    env["GPREEMPT_SIM_PROFILE"] = profile.name;
  std::string err;
  auto opts = parse_model_config(env, &err);
  if (!opts) throw gpreempt::Error(EINVAL, err);
  // The machine's topology is the truth for geometry; the timing parameters stay the model's.
  GpuProfile& p = opts->profile;
  if (const auto* g = gpreempt::sim::gpu_geometry(profile.name)) {
    // A known model: the geometry both sides derive from (sim/device/gpu_geometry.h).
    const std::string timing_name = p.name;
    apply_geometry(p, *g);
    p.name = timing_name;
  } else {
    // A hand-built machine (tests): its topology is the truth for geometry.
    if (profile.num_xcc && profile.cu_count) {
      p.num_xcc = profile.num_xcc;
      p.cus_per_xcc = profile.cu_count / profile.num_xcc;
    }
    if (profile.max_engine_clk_fcompute) p.clock_mhz = profile.max_engine_clk_fcompute;
    if (profile.pipes_per_mec && profile.queues_per_pipe > profile.first_kfd_queue) {
      p.compute_pipes = profile.pipes_per_mec;
      p.queues_per_pipe = profile.queues_per_pipe - profile.first_kfd_queue;
    }
  }
  std::string stats;
  if (const char* s = getenv("GPREEMPT_SIM_STATS")) {
    stats = s;
  } else {
    stats = protocol::machine_paths(getenv, static_cast<unsigned>(getuid())).dir + "/gpu-stats.json";
  }
  return std::make_unique<GpuHardware>(std::move(*opts), std::move(stats));
}

}  // namespace gpreempt::sim::gpu
