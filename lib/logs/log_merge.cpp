#include "logs/log_merge.h"

#include <map>

namespace gpreempt::logs {

void merge_into(LogSummary& into, const LogSummary& later, std::size_t max_errors) {
  const std::uint64_t offset = into.lines;
  into.lines += later.lines;
  into.records += later.records;
  into.recognized += later.recognized;
  for (const auto& [l, n] : later.levels) into.levels[l] += n;
  into.dispatches += later.dispatches;
  into.barriers += later.barriers;
  for (const auto& [k, n] : later.kernels) into.kernels[k] += n;
  into.truncated_record = into.truncated_record || later.truncated_record;

  for (const auto& p : later.processes) {
    ProcessThreads* found = nullptr;
    for (auto& q : into.processes)
      if (q.pid == p.pid) found = &q;
    if (!found) {
      into.processes.push_back({p.pid, {}});
      found = &into.processes.back();
    }
    found->tids.insert(p.tids.begin(), p.tids.end());
  }

  for (const auto& h : later.hw_queues) {
    HwQueueStats* q = nullptr;
    for (auto& c : into.hw_queues)
      if (c.address == h.address && c.pid == h.pid) q = &c;
    // A queue-abort dump line names an HWq without a pid: it belongs to the queue already known.
    if (!q && !h.pid)
      for (auto& c : into.hw_queues)
        if (c.address == h.address) q = &c;
    if (!q) {
      HwQueueStats n = h;
      if (n.created_line) *n.created_line += offset;
      into.hw_queues.push_back(std::move(n));
      continue;
    }
    q->sw_queues.insert(h.sw_queues.begin(), h.sw_queues.end());
    q->ids.insert(h.ids.begin(), h.ids.end());
    // As in one pass, a later creation line of the same address (a queue re-created after its
    // deletion) describes it from then on.
    if (h.size) q->size = h.size;
    if (h.priority) q->priority = h.priority;
    if (h.cooperative) q->cooperative = h.cooperative;
    if (h.created_line) q->created_line = *h.created_line + offset;
    q->acquired += h.acquired;
    q->released += h.released;
    q->deleted = q->deleted || h.deleted;
    q->dispatches += h.dispatches;
    q->barriers += h.barriers;
  }

  into.errors_total += later.errors_total;
  for (const auto& e : later.errors) {
    if (into.errors.size() >= max_errors) break;
    into.errors.push_back({e.line + offset, e.text});
  }
}

}  // namespace gpreempt::logs
