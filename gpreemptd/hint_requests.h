// The requests clients hint on gpreemptd's socket, by connection: the `begin`s still open (each
// with the scheduler's request id, its process and when it began), the ones the daemon ended at
// max_request (so that their late `end` is answered as such, not as a mistake), and each
// connection's token bucket of hints (docs/gpreemptd.md, "The socket's limits").
//
// Bookkeeping only: the daemon turns what these calls return into scheduler events and owns the
// timer that calls expire(). No clock is read here; every time is the caller's.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "sched/process_key.h"
#include "sched/time.h"

namespace gpreemptd {

class HintRequests {
 public:
  using Clock = std::chrono::steady_clock;
  struct Open {
    uint64_t id = 0;  // the scheduler's request id, unique across connections
    gpreempt::sched::ProcessKey key;
    Clock::time_point started;
  };
  struct Expired {
    uint64_t connection = 0;
    uint64_t client_id = 0;  // the id the client gave its `begin`
    Open request;
  };
  enum class EndOutcome {
    kEnded,    // it was open: now ended (its record in *ended)
    kExpired,  // the daemon ended it at max_request already
    kUnknown,  // never begun on this connection
  };
  // Ids of requests ended at max_request kept per connection for their late `end` (the oldest
  // forgotten first): a client cannot grow the daemon's memory with requests it never ends.
  static constexpr std::size_t kMaxExpiredKept = 1024;

  // Takes a token of the connection's bucket (`burst` tokens, refilled at `rate` per second);
  // false, counted in rate_limited(), when it is empty.
  bool take_token(uint64_t connection, Clock::time_point now, double rate, double burst);
  // Opens `client_id` on the connection for `key`; nullopt when that id is open there already.
  std::optional<Open> begin(uint64_t connection, uint64_t client_id,
                            const gpreempt::sched::ProcessKey& key, Clock::time_point at);
  EndOutcome end(uint64_t connection, uint64_t client_id, Open* ended);
  // The request `client_id` open on the connection (a `token` report names it): kEnded with its
  // record in *found, kExpired or kUnknown as for end(); nothing changes.
  EndOutcome find(uint64_t connection, uint64_t client_id, Open* found) const;
  // Ends every request begun `limit` or more before `now`, oldest connection first.
  std::vector<Expired> expire(Clock::time_point now, gpreempt::sched::Duration limit);
  // When the oldest open request began (nullopt: none open): the next expire() is due `limit`
  // after it.
  std::optional<Clock::time_point> oldest_start() const;
  // The connection is gone: forgets it, and returns its open requests (for the caller to end).
  std::vector<Open> close(uint64_t connection);
  // The process exited: its open requests are forgotten (the scheduler forgets the process).
  void forget_process(const gpreempt::sched::ProcessKey& key);

  uint64_t expired_total() const { return expired_total_; }
  uint64_t rate_limited() const { return rate_limited_; }

 private:
  struct Bucket {
    double tokens = 0;
    Clock::time_point at{};
  };
  std::map<uint64_t, std::map<uint64_t, Open>> open_;  // connection → client id →
  std::map<uint64_t, std::set<uint64_t>> expired_;     // connection → client ids
  std::map<uint64_t, Bucket> buckets_;                 // connection →
  uint64_t next_id_ = 1;
  uint64_t expired_total_ = 0;
  uint64_t rate_limited_ = 0;
};

}  // namespace gpreemptd
