#include "hint_requests.h"

#include <algorithm>

namespace gpreemptd {

bool HintRequests::take_token(uint64_t connection, Clock::time_point now, double rate,
                              double burst) {
  auto [it, fresh] = buckets_.try_emplace(connection, Bucket{burst, now});
  Bucket& b = it->second;
  if (!fresh) {
    b.tokens = std::min(burst, b.tokens + rate * std::chrono::duration<double>(now - b.at).count());
    b.at = now;
  }
  if (b.tokens < 1) {
    ++rate_limited_;
    return false;
  }
  b.tokens -= 1;
  return true;
}

std::optional<HintRequests::Open> HintRequests::begin(uint64_t connection, uint64_t client_id,
                                                      const gpreempt::sched::ProcessKey& key,
                                                      Clock::time_point at) {
  auto& open = open_[connection];
  if (open.count(client_id)) return std::nullopt;
  Open r{next_id_++, key, at};
  open[client_id] = r;
  // The id is reused: its `end` is this request's, not the expired one's.
  if (auto x = expired_.find(connection); x != expired_.end()) x->second.erase(client_id);
  return r;
}

HintRequests::EndOutcome HintRequests::end(uint64_t connection, uint64_t client_id, Open* ended) {
  if (auto c = open_.find(connection); c != open_.end())
    if (auto it = c->second.find(client_id); it != c->second.end()) {
      if (ended) *ended = it->second;
      c->second.erase(it);
      return EndOutcome::kEnded;
    }
  if (auto x = expired_.find(connection); x != expired_.end() && x->second.erase(client_id))
    return EndOutcome::kExpired;
  return EndOutcome::kUnknown;
}

HintRequests::EndOutcome HintRequests::find(uint64_t connection, uint64_t client_id,
                                             Open* found) const {
  if (auto c = open_.find(connection); c != open_.end())
    if (auto it = c->second.find(client_id); it != c->second.end()) {
      if (found) *found = it->second;
      return EndOutcome::kEnded;
    }
  if (auto x = expired_.find(connection); x != expired_.end() && x->second.count(client_id))
    return EndOutcome::kExpired;
  return EndOutcome::kUnknown;
}

std::vector<HintRequests::Expired> HintRequests::expire(Clock::time_point now,
                                                        gpreempt::sched::Duration limit) {
  std::vector<Expired> out;
  for (auto& [connection, open] : open_)
    for (auto it = open.begin(); it != open.end();) {
      if (now - it->second.started < limit) {
        ++it;
        continue;
      }
      out.push_back({connection, it->first, it->second});
      auto& kept = expired_[connection];
      if (kept.size() >= kMaxExpiredKept) kept.erase(kept.begin());
      kept.insert(it->first);
      ++expired_total_;
      it = open.erase(it);
    }
  return out;
}

std::optional<HintRequests::Clock::time_point> HintRequests::oldest_start() const {
  std::optional<Clock::time_point> first;
  for (const auto& [connection, open] : open_)
    for (const auto& [id, r] : open)
      if (!first || r.started < *first) first = r.started;
  return first;
}

std::vector<HintRequests::Open> HintRequests::close(uint64_t connection) {
  buckets_.erase(connection);
  expired_.erase(connection);
  std::vector<Open> out;
  auto it = open_.find(connection);
  if (it == open_.end()) return out;
  for (const auto& [client_id, r] : it->second) out.push_back(r);
  open_.erase(it);
  return out;
}

void HintRequests::forget_process(const gpreempt::sched::ProcessKey& key) {
  for (auto& [connection, open] : open_)
    for (auto it = open.begin(); it != open.end();)
      it = it->second.key == key ? open.erase(it) : std::next(it);
}

}  // namespace gpreemptd
