#include "logs/log_compare.h"

#include <algorithm>
#include <map>
#include <set>

namespace gpreempt::logs {

LogComparison compare(const LogSummary& a, const LogSummary& b) {
  LogComparison c;
  c.hw_queues_a = a.hw_queues.size();
  c.hw_queues_b = b.hw_queues.size();
  c.dispatches_a = a.dispatches;
  c.dispatches_b = b.dispatches;
  c.barriers_a = a.barriers;
  c.barriers_b = b.barriers;
  c.errors_a = a.errors_total;
  c.errors_b = b.errors_total;
  std::set<std::uint64_t> sa, sb;
  for (const auto& q : a.hw_queues) sa.insert(q.address);
  for (const auto& q : b.hw_queues) sb.insert(q.address);
  std::set_difference(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(c.hwq_only_a));
  std::set_difference(sb.begin(), sb.end(), sa.begin(), sa.end(), std::back_inserter(c.hwq_only_b));
  std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(c.hwq_common));
  std::map<std::string, KernelDelta> k;
  for (const auto& [name, n] : a.kernels) k[name] = {name, n, 0};
  for (const auto& [name, n] : b.kernels) {
    auto& d = k[name];
    d.name = name;
    d.b = n;
  }
  for (auto& [name, d] : k) c.kernels.push_back(d);
  auto prios = [](const LogSummary& s) {
    std::vector<std::pair<std::size_t, int>> v;
    for (const auto& q : s.hw_queues)
      if (q.priority) v.push_back({q.created_line.value_or(0), *q.priority});
    std::sort(v.begin(), v.end());
    std::vector<int> out;
    for (auto& [l, p] : v) out.push_back(p);
    return out;
  };
  c.priorities_a = prios(a);
  c.priorities_b = prios(b);
  return c;
}

std::vector<QueueConfig> queue_configs(const LogSummary& s, std::optional<int> pid) {
  std::vector<QueueConfig> out;
  std::map<int, std::size_t> index;  // pid (-1 none) -> out[]
  for (const auto& q : s.hw_queues) {
    if (pid && q.pid && *q.pid != *pid) continue;
    const int key = q.pid.value_or(-1);
    auto [it, inserted] = index.try_emplace(key, out.size());
    if (inserted) out.push_back({q.pid, {}});
    QueueConfigEntry e;
    e.hwq = q.address;
    e.rptr_address = q.address + 0x80;  // amd_queue_t.read_dispatch_id
    e.ids.assign(q.ids.begin(), q.ids.end());
    e.sw_queues.assign(q.sw_queues.begin(), q.sw_queues.end());
    e.priority = q.priority;
    e.size = q.size;
    e.dispatches = q.dispatches;
    out[it->second].queues.push_back(std::move(e));
  }
  return out;
}

}  // namespace gpreempt::logs
