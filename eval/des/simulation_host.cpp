#include "eval/des/simulation_impl.h"

namespace gpreempt::eval::des::detail {

// ---- what the baseline's policy may ask of the Simulation (PolicyHost) ----------------------

std::vector<QueueKey> Simulation::queues_on(uint32_t gpu, bool online) const {
  std::vector<QueueKey> out;
  for (const auto& c : clients_)
    if (c.online == online)
      for (const auto& cp : c.copies)
        if (cp.gpu == gpu) out.insert(out.end(), cp.queues.begin(), cp.queues.end());
  return out;
}

std::vector<std::string> Simulation::offline_on(uint32_t gpu) const {
  std::vector<std::string> out;
  for (const auto& c : clients_)
    if (!c.online)
      for (const auto& cp : c.copies)
        if (cp.gpu == gpu) out.push_back(c.name);
  return out;
}

void Simulation::pump_offline(uint32_t gpu) {
  for (auto& c : clients_)
    if (!c.online)
      for (uint32_t j = 0; j < c.copies.size(); ++j)
        if (c.copies[j].gpu == gpu) pump(c, j);
}

void Simulation::record(Decision d) {
  if (spec_.record.decisions) res_.decisions.push_back(std::move(d));
}

}  // namespace gpreempt::eval::des::detail
