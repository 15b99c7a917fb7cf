#include "transparent/transparent_trigger.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <utility>

#include "common/error.h"
#include "common/text_file.h"
#include "discovery/process_discovery.h"

namespace gpreemptd {

using gpreempt::Error;
using gpreempt::list_directory;
using gpreempt::read_text_file;

namespace {

// nullopt when the pid is gone, a zombie (an exited process its parent has not reaped keeps its
// /proc entry and answers kill(pid, 0), though its queues and memory are gone) or exiting.
std::optional<uint64_t> start_time_ticks(int pid) {
  return discovery::live_start_time(discovery::SystemRoots{}, pid);
}

bool pid_gone(int pid) {
  return (::kill(pid, 0) < 0 && errno == ESRCH) || !start_time_ticks(pid);
}

}  // namespace

TransparentTrigger::TransparentTrigger(EventLoop& loop, TransparentTriggerConfig config, Sink sink)
    : loop_(loop),
      config_(std::move(config)),
      sink_(std::move(sink)) {
  if (!sink_.sampled || !sink_.unwatched)
    throw std::invalid_argument("transparent trigger: the sink needs both functions");
  if (config_.poll_interval < TransparentTriggerConfig::kMinPollInterval ||
      config_.poll_interval > TransparentTriggerConfig::kMaxPollInterval)
    throw std::invalid_argument("transparent trigger: poll interval must be 100..500 us, got " +
                                std::to_string(config_.poll_interval.count() / 1000) + " us");
  if (config_.queue_check_interval <= std::chrono::nanoseconds::zero())
    throw std::invalid_argument("transparent trigger: queue check interval must be positive");
  timer_ = loop_.add_timer([this] { poll(); });
}

TransparentTrigger::~TransparentTrigger() {
  loop_.unwatch(timer_);
}

sched::Time TransparentTrigger::now() const {
  if (config_.clock) return config_.clock();
  return std::chrono::duration_cast<sched::Time>(
      std::chrono::steady_clock::now().time_since_epoch());
}

void TransparentTrigger::note(const std::string& s) const {
  if (config_.log) config_.log(s);
}

void TransparentTrigger::set_poll_interval(std::chrono::nanoseconds interval) {
  if (interval < TransparentTriggerConfig::kMinPollInterval ||
      interval > TransparentTriggerConfig::kMaxPollInterval)
    throw std::invalid_argument("transparent trigger: poll interval must be 100..500 us, got " +
                                std::to_string(interval.count() / 1000) + " us");
  config_.poll_interval = interval;
  if (timer_armed_) loop_.arm_every(timer_, config_.poll_interval);
}

void TransparentTrigger::update_timer() {
  const bool want = !watched_.empty();
  if (want == timer_armed_) return;
  if (want)
    loop_.arm_every(timer_, config_.poll_interval);
  else
    loop_.arm_at(timer_, std::nullopt);
  timer_armed_ = want;
}

void TransparentTrigger::watch(const sched::ProcessKey& key, int pid) {
  if (key.start_time_ticks) {
    const auto st = start_time_ticks(pid);
    if (!st) throw Error(ESRCH, "pid " + std::to_string(pid) + ": no such process");
    if (*st != key.start_time_ticks)
      throw Error(ESRCH, "pid " + std::to_string(pid) + " is another process than " +
                             sched::to_string(key) + " (started at tick " + std::to_string(*st) +
                             ")");
  } else if (pid_gone(pid)) {
    throw Error(ESRCH, "pid " + std::to_string(pid) + ": no such process");
  }
  Watched w;
  w.pid = pid;
  w.next_check = now() + config_.queue_check_interval;
  const auto ids =
      list_directory(config_.sources.kfd_sysfs + "/proc/" + std::to_string(pid) + "/queues");
  if (ids) w.sysfs_queue_ids = *ids;
  load_addresses(key, w);  // throws: nothing is watched then
  if (auto it = watched_.find(key); it != watched_.end()) {
    it->second = std::move(w);
  } else {
    watched_.emplace(key, std::move(w));
  }
  update_timer();
}

void TransparentTrigger::unwatch(const sched::ProcessKey& key) {
  if (!watched_.erase(key)) return;
  sink_.unwatched(now(), key);
  update_timer();
}

void TransparentTrigger::drop(const sched::ProcessKey& key, const std::string& why) {
  note("transparent trigger: stopped watching " + sched::to_string(key) + ": " + why);
  unwatch(key);
  if (config_.on_unwatched) config_.on_unwatched(key, why);
}

void TransparentTrigger::refresh(int pid) {
  std::vector<sched::ProcessKey> keys;
  for (auto& [key, w] : watched_)
    if (w.pid == pid) keys.push_back(key);
  for (const auto& key : keys) {
    auto it = watched_.find(key);
    if (it == watched_.end()) continue;
    try {
      load_addresses(key, it->second);
    } catch (const Error& e) {
      if (e.code() == ESRCH || pid_gone(pid))
        drop(key, e.what());
      else
        note("transparent trigger: " + sched::to_string(key) + ": " + e.what());
    }
  }
}

void TransparentTrigger::load_addresses(const sched::ProcessKey&, Watched& w) {
  ++stats_.address_reads;
  std::vector<std::string> notes;
  auto queues = discovery::read_queue_pointers(w.pid, config_.sources, &notes);
  if (queues.empty() && !w.sysfs_queue_ids.empty())
    note("transparent trigger: pid " + std::to_string(w.pid) + " has " +
         std::to_string(w.sysfs_queue_ids.size()) +
         " queue(s) in sysfs but none with pointer addresses in " + config_.sources.debugfs +
         "/mqds");
  if (w.reader && w.reader->queues() == queues) return;
  w.reader = std::make_unique<discovery::PointerReader>(w.pid, std::move(queues));
}

bool TransparentTrigger::check(const sched::ProcessKey& key, Watched& w) {
  if (key.start_time_ticks) {
    const auto st = start_time_ticks(w.pid);
    if (!st) {
      drop(key, "process gone");
      return false;
    }
    if (*st != key.start_time_ticks) {
      drop(key, "pid " + std::to_string(w.pid) + " now belongs to another process");
      return false;
    }
  }
  auto ids =
      list_directory(config_.sources.kfd_sysfs + "/proc/" + std::to_string(w.pid) + "/queues");
  if (!ids) {
    if (pid_gone(w.pid)) {
      drop(key, "process gone");
      return false;
    }
    ids.emplace();  // no KFD process (yet, or any more): no queues
  }
  if (*ids != w.sysfs_queue_ids) {
    w.sysfs_queue_ids = std::move(*ids);
    try {
      load_addresses(key, w);
    } catch (const Error& e) {
      note("transparent trigger: " + sched::to_string(key) + ": " + e.what());
    }
  }
  return true;
}

void TransparentTrigger::poll() {
  ++stats_.polls;
  // A callback below may unwatch any process: walk a copy of the keys.
  poll_keys_.clear();
  for (const auto& [key, w] : watched_) poll_keys_.push_back(key);
  for (const auto& key : poll_keys_) {
    auto it = watched_.find(key);
    if (it == watched_.end()) continue;
    Watched& w = it->second;
    if (const sched::Time t = now(); t >= w.next_check) {
      w.next_check = t + config_.queue_check_interval;
      if (!check(key, w)) continue;
    }
    const std::vector<discovery::PointerSample>* samples = nullptr;
    try {
      samples = &w.reader->sample();
    } catch (const Error& e) {
      ++stats_.read_errors;
      if (e.code() == ESRCH) {
        drop(key, e.what());
        continue;
      }
      if (w.last_error != e.what()) {
        w.last_error = e.what();
        note("transparent trigger: " + sched::to_string(key) + ": " + e.what());
      }
      if (e.code() == EPERM || e.code() == EACCES) {
        drop(key, e.what());
        continue;
      }
      // EFAULT/EIO: a destroyed queue's memory may be gone before the queue list shows it, so
      // the list is checked at the next poll (addresses are re-read only if it changed).
      w.next_check = std::min(w.next_check, now());
      continue;
    }
    const sched::Time t = now();
    ++stats_.samples;
    const auto& qs = w.reader->queues();
    activity_.clear();
    for (std::size_t i = 0; i < qs.size(); ++i)
      activity_.push_back(
          {qs[i].gpu_id, qs[i].rptr_address, (*samples)[i].rptr, (*samples)[i].wptr});
    sink_.sampled(t, key, activity_);
  }
}

std::size_t TransparentTrigger::queue_count(const sched::ProcessKey& key) const {
  auto it = watched_.find(key);
  return it == watched_.end() || !it->second.reader ? 0 : it->second.reader->queues().size();
}

std::string TransparentTrigger::read_method_note(const sched::ProcessKey& key) const {
  auto it = watched_.find(key);
  return it == watched_.end() || !it->second.reader ? std::string()
                                                    : it->second.reader->method_note();
}

}  // namespace gpreemptd
