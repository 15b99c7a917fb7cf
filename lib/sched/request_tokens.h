// An LLM request's tokens as its client reports them (protocol op `token`, `end` with `tokens`):
// when its first output token came and how far its decode has got. From these come the request's
// TTFT and TPOT (the objective's measures, objective.h) and, under Protection::kLate, whether the
// request is late.
//
// Why lateness is judged per request on tokens, not on how long the request has run: an LLM
// request lasts seconds (a prefill, then one decode step per output token), so by the end-to-end
// rule (late after half the latency target) every request would be late and kLate would be
// per_request. What the objectives promise is a first token within the TTFT target and a pace of
// tokens within the TPOT target, so:
//   * TTFT: a request with no first token ttft/2 after it began is late (half the budget spent in
//     prefill, the other half left for the suspension and the rest of the prefill), until its
//     first token comes;
//   * TPOT: a request is late while the decode pace it reported last, (t - first) / (tokens - 1)
//     at its latest report, is over tpot/2. A client that reports only its first token gives no
//     pace, so its decode is never late: the TPOT measured at its end still judges the protection
//     and escalates it past kLate when needed (slo_controller.h). The server reports every few
//     tokens (docs/llm.md), a message per token per request would cost more than it tells.
//   * a request-latency goal stated beside them: late after half its target, per request.
// A process is late as soon as one of its open requests is (late_at over them all).
#pragma once

#include <cstdint>
#include <optional>

#include "sched/objective.h"
#include "sched/time.h"

namespace gpreempt::sched {

struct RequestTokens {
  Time started{};                    // its begin
  std::optional<Time> first_token;   // its first token, when reported
  uint64_t tokens = 0;               // output tokens reported so far (0: none yet)
  std::optional<Time> progress_at;   // when `tokens` was reported

  // A report of `count` tokens so far (>= 1) at `now`; the first report is the first token. A
  // count below the last one is ignored (reports may only move forward). `at_end`: the count
  // given with the end, which is never a first token. True when it was the first token.
  bool report(Time now, uint64_t count, bool at_end = false);
  // Begin to first token; nullopt before it.
  std::optional<Duration> ttft() const;
  // (end - first token) / (tokens - 1) for a request that ended at `end` with the tokens
  // reported; nullopt without a first token or with fewer than two tokens (one token has no time
  // per output token).
  std::optional<Duration> tpot(Time end) const;
  // When the request is (or becomes) late under `o` (see above); nullopt: not late as things
  // stand.
  std::optional<Time> late_at(const Objective& o) const;
};

}  // namespace gpreempt::sched
