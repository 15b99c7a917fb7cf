#include "preempt/ledger.h"

namespace gpreempt::preempt {

void SuspensionLedger::suspended(uint32_t queue_id, Clock::time_point now) {
  since_.emplace(queue_id, now);
}

void SuspensionLedger::resumed(uint32_t queue_id) { since_.erase(queue_id); }

std::vector<uint32_t> SuspensionLedger::ids() const {
  std::vector<uint32_t> out;
  for (const auto& [id, t] : since_) out.push_back(id);
  return out;
}

std::vector<uint32_t> SuspensionLedger::older_than(Clock::time_point now,
                                                   Clock::duration bound) const {
  std::vector<uint32_t> out;
  for (const auto& [id, t] : since_)
    if (now - t > bound) out.push_back(id);
  return out;
}

std::optional<Clock::time_point> SuspensionLedger::oldest() const {
  std::optional<Clock::time_point> out;
  for (const auto& [id, t] : since_)
    if (!out || t < *out) out = t;
  return out;
}

}  // namespace gpreempt::preempt
