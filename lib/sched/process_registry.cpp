#include "sched/process_registry.h"

#include <stdexcept>

namespace gpreempt::sched {

std::optional<ProcessKey> ProcessRegistry::displaced_by(const ProcessKey& newcomer) const {
  auto it = by_pid_.find(newcomer.pid);
  if (it == by_pid_.end() || it->second == newcomer) return std::nullopt;
  return it->second;
}

ProcessRecord& ProcessRegistry::admit(const ProcessKey& key) {
  if (auto old = displaced_by(key))
    throw std::logic_error("process " + to_string(key) + " admitted while " + to_string(*old) +
                           " holds its pid");
  by_pid_[key.pid] = key;
  ProcessRecord& r = records_[key];
  r.key = key;
  return r;
}

void ProcessRegistry::remove(const ProcessKey& key) {
  if (records_.erase(key) == 0) return;
  if (auto p = by_pid_.find(key.pid); p != by_pid_.end() && p->second == key) by_pid_.erase(p);
}

const ProcessRecord* ProcessRegistry::find(const ProcessKey& key) const {
  auto it = records_.find(key);
  return it == records_.end() ? nullptr : &it->second;
}

ProcessRecord* ProcessRegistry::find(const ProcessKey& key) {
  auto it = records_.find(key);
  return it == records_.end() ? nullptr : &it->second;
}

const ProcessRecord* ProcessRegistry::with_pid(int pid) const {
  auto it = by_pid_.find(pid);
  return it == by_pid_.end() ? nullptr : find(it->second);
}

}  // namespace gpreempt::sched
