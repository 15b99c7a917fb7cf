// Which queues of one target we have suspended, and since when: the state behind "never leave a
// target frozen" (resume on detach, on signals, and when the watchdog bound is exceeded).
// Pure data; the caller supplies the time.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace gpreempt::preempt {

using Clock = std::chrono::steady_clock;

class SuspensionLedger {
 public:
  // Record queues now suspended. A queue already recorded keeps its original time: the watchdog
  // bounds the whole time it has been frozen, not the time since the last call.
  void suspended(uint32_t queue_id, Clock::time_point now);
  void resumed(uint32_t queue_id);
  void clear() { since_.clear(); }
  bool empty() const { return since_.empty(); }
  bool contains(uint32_t queue_id) const { return since_.count(queue_id) != 0; }
  std::size_t size() const { return since_.size(); }
  // Ascending ids.
  std::vector<uint32_t> ids() const;
  // Queues suspended for longer than `bound` at `now`.
  std::vector<uint32_t> older_than(Clock::time_point now, Clock::duration bound) const;
  std::optional<Clock::time_point> oldest() const;

 private:
  std::map<uint32_t, Clock::time_point> since_;
};

}  // namespace gpreempt::preempt
