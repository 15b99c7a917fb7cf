#include "sched/request_tokens.h"

namespace gpreempt::sched {

namespace {
void earliest(std::optional<Time>& acc, Time t) {
  if (!acc || t < *acc) acc = t;
}
}  // namespace

bool RequestTokens::report(Time now, uint64_t count, bool at_end) {
  if (count == 0 || count < tokens) return false;
  if (at_end) {
    tokens = count;
    return false;
  }
  const bool first = !first_token.has_value();
  if (first) first_token = now;
  tokens = count;
  progress_at = now;
  return first;
}

std::optional<Duration> RequestTokens::ttft() const {
  if (!first_token) return std::nullopt;
  return *first_token - started;
}

std::optional<Duration> RequestTokens::tpot(Time end) const {
  if (!first_token || tokens < 2) return std::nullopt;
  return (end - *first_token) / static_cast<Duration::rep>(tokens - 1);
}

std::optional<Time> RequestTokens::late_at(const Objective& o) const {
  std::optional<Time> at;
  if (o.target > Duration::zero()) earliest(at, started + late_after(o));
  if (o.ttft && !first_token) earliest(at, started + o.ttft->target / 2);
  if (o.tpot && first_token && progress_at && tokens >= 2) {
    const Duration pace = (*progress_at - *first_token) / static_cast<Duration::rep>(tokens - 1);
    if (pace > o.tpot->target / 2) earliest(at, *progress_at);
  }
  return at;
}

}  // namespace gpreempt::sched
