#include "discovery/process_watch.h"

#include <map>

namespace gpreempt::discovery {

namespace {

std::map<int, const ProcessInfo*> by_pid(const std::vector<ProcessInfo>& v) {
  std::map<int, const ProcessInfo*> m;
  for (const auto& p : v) m[p.pid] = &p;
  return m;
}

WatchEvent process_event(const char* kind, const ProcessInfo& p) {
  WatchEvent e;
  e.kind = kind;
  e.pid = p.pid;
  e.container_pid = p.container_pid;
  e.cmdline = p.cmdline;
  return e;
}

WatchEvent queue_event(const char* kind, const ProcessInfo& p, const KnownQueue& q) {
  WatchEvent e;
  e.kind = kind;
  e.pid = p.pid;
  e.container_pid = p.container_pid;
  e.queue_id = q.queue_id;
  e.gpu_id = q.gpu_id;
  e.queue_type = q.type;
  return e;
}

// Queues keyed by (id, gpu): an id reused for a queue on another GPU is a new queue.
std::map<std::pair<std::uint32_t, std::uint32_t>, const KnownQueue*> queues_of(const ProcessInfo& p) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, const KnownQueue*> m;
  for (const auto& q : p.queues) m[{q.queue_id, q.gpu_id}] = &q;
  return m;
}

}  // namespace

std::vector<WatchEvent> diff_processes(const std::vector<ProcessInfo>& before,
                                       const std::vector<ProcessInfo>& after) {
  std::vector<WatchEvent> out;
  const auto a = by_pid(before), b = by_pid(after);
  for (const auto& [pid, p] : a)
    if (!b.count(pid)) out.push_back(process_event("process_exited", *p));
  for (const auto& [pid, p] : b)
    if (!a.count(pid)) out.push_back(process_event("process_started", *p));
  for (const auto& [pid, p] : b) {
    static const ProcessInfo kNone;
    const auto it = a.find(pid);
    const auto old_q = queues_of(it == a.end() ? kNone : *it->second), new_q = queues_of(*p);
    for (const auto& [k, q] : old_q)
      if (!new_q.count(k)) out.push_back(queue_event("queue_destroyed", *p, *q));
    for (const auto& [k, q] : new_q)
      if (!old_q.count(k)) out.push_back(queue_event("queue_created", *p, *q));
  }
  return out;
}

}  // namespace gpreempt::discovery
