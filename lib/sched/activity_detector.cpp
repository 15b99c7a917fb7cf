#include "sched/activity_detector.h"

#include <algorithm>

namespace gpreempt::sched {

namespace {

// Something that happened between two samples is dated at their middle.
std::optional<Time> middle(std::optional<Time> before, Time now) {
  if (!before) return std::nullopt;
  return *before + (now - *before) / 2;
}

}  // namespace

ActivityDetector::ActivityDetector(ActivityDetectorConfig config) : config_(config) {}

std::vector<Event> ActivityDetector::update(Time now, const ProcessKey& key,
                                            const std::vector<QueueActivitySample>& samples) {
  Process& p = processes_[key];
  const std::optional<Time> prev = p.last_sample;
  const std::optional<Time> mid = middle(prev, now);
  bool active = false;
  std::vector<Event> out;  // kernels first; a RequestStarted goes in front of them
  const uint64_t epoch = ++p.epoch;

  for (const auto& s : samples) {
    // rptr is read before wptr and both only grow, so rptr > wptr cannot be sampled; clamp anyway.
    const uint64_t rptr = s.rptr;
    const uint64_t wptr = std::max(s.wptr, s.rptr);
    auto it = p.queues.find(s.queue);
    const bool known = it != p.queues.end();
    if (!known || rptr < it->second.rptr || wptr < it->second.wptr || s.gpu != it->second.gpu) {
      if (known) ++stats_.queue_resets;
      QueueState st;
      st.gpu = s.gpu;
      st.rptr = rptr;
      st.wptr = wptr;
      st.epoch = epoch;
      // When the pending head packet started is unknown on first sight.
      if (wptr > rptr) active = true;
      p.queues[s.queue] = st;
      continue;
    }
    QueueState& st = it->second;
    st.epoch = epoch;
    if (wptr > st.wptr || wptr > rptr) active = true;

    const uint64_t retired = rptr - st.rptr;
    if (config_.kernel_lengths && retired > 0 && st.head_since && mid && st.wptr >= rptr) {
      // Back to back since the head started: each retired packet gets the mean.
      const Duration total = *mid - *st.head_since;
      const Duration each{total.count() / static_cast<int64_t>(retired)};
      if (each.count() > 0) {
        const uint64_t n = std::min(retired, kMaxKernelEventsPerQueue);
        for (uint64_t i = 0; i < n; ++i) out.push_back(event::KernelObserved{st.gpu, key, each});
        stats_.kernels_observed += n;
      }
    }
    if (wptr > rptr) {
      // A new head (the previous one retired, or the queue was idle) started in this interval;
      // the same head still pending keeps its start.
      if (retired > 0 || st.wptr == st.rptr) st.head_since = mid;
    } else {
      st.head_since.reset();
    }
    st.rptr = rptr;
    st.wptr = wptr;
  }
  std::erase_if(p.queues, [&](const auto& q) { return q.second.epoch != epoch; });
  p.last_sample = now;

  if (!p.open && active) {
    p.open = next_request_++;
    p.idle_since.reset();
    ++stats_.requests;
    out.insert(out.begin(), event::RequestStarted{key, *p.open, RequestSource::kTransparent});
  }
  if (p.open) {
    if (active) {
      p.idle_since.reset();
    } else {
      if (!p.idle_since) p.idle_since = now;
      if (now - *p.idle_since >= config_.settle) {
        out.push_back(event::RequestFinished{key, *p.open, RequestSource::kTransparent});
        p.open.reset();
        p.idle_since.reset();
      }
    }
  }
  return out;
}

std::vector<Event> ActivityDetector::forget(Time, const ProcessKey& key) {
  std::vector<Event> out;
  auto it = processes_.find(key);
  if (it == processes_.end()) return out;
  if (it->second.open)
    out.push_back(event::RequestFinished{key, *it->second.open, RequestSource::kTransparent});
  processes_.erase(it);
  return out;
}

bool ActivityDetector::busy(const ProcessKey& key) const {
  return open_request(key).has_value();
}

std::optional<uint64_t> ActivityDetector::open_request(const ProcessKey& key) const {
  auto it = processes_.find(key);
  if (it == processes_.end()) return std::nullopt;
  return it->second.open;
}

}  // namespace gpreempt::sched
