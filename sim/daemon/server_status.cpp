// kfdsim status and kfdsim queues: the machine, its clients and the loop's costs, and the
// device's queues, as JSON.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "sim/daemon/server_state.h"

namespace gpreempt::sim::daemon {

std::string Server::status_json() const {
  nlohmann::json j;
  j["daemon_pid"] = getpid();
  j["dir"] = config_.paths.dir;
  j["socket"] = config_.paths.socket;
  j["root"] = tree_.root();
  j["profile"] = profile_.name;
  j["marketing_name"] = profile_.marketing_name;
  j["gfx_arch"] = profile_.gfx_arch;
  j["kfd_version"] = "1." + std::to_string(config_.machine.kfd_minor);
  j["sched_policy"] = config_.machine.sched_policy;
  j["kernel_hz"] = config_.machine.kernel_hz;
  j["hardware"] = config_.machine.hardware;
  j["cpu_nodes"] = {{"source", config_.machine.cpu_nodes}, {"count", profile_.cpu_nodes},
                    {"cores_per_node", profile_.cpu_cores_per_node}};
  j["persistent"] = config_.persistent;
  j["shared"] = config_.machine.shared;
  j["owner_uid"] = ::geteuid();
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : profile_.gpus)
    gpus.push_back({{"gpu_id", g.gpu_id}, {"location_id", g.location_id},
                    {"drm_render_minor", g.drm_render_minor}});
  j["gpus"] = gpus;
  nlohmann::json clients = nlohmann::json::array();
  for (const auto& [pid, p] : procs_)
    if (p->client) clients.push_back(pid);
  j["clients"] = clients;
  j["queues"] = device_->queues().size();
  auto cost = [](const Cost& c) {
    return nlohmann::json{{"count", c.count}, {"total_ns", c.total_ns}, {"max_ns", c.max_ns}};
  };
  j["loop"] = {{"refresh", cost(refresh_cost_)}, {"tick", cost(tick_cost_)}, {"hardware_wakes", hardware_wakes_}};
  return j.dump();
}

std::string Server::queues_json() const {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& q : device_->queues()) {
    a.push_back({{"pid", q.pid},
                 {"queue_id", q.queue_id},
                 {"gpu_id", q.gpu_id},
                 {"type", q.uapi_type},
                 {"ring_base", q.ring_base},
                 {"ring_size", q.ring_size},
                 {"read_pointer_address", q.read_pointer_address},
                 {"write_pointer_address", q.write_pointer_address},
                 {"priority", q.priority},
                 {"suspended", q.suspended}});
  }
  return a.dump();
}

}  // namespace gpreempt::sim::daemon
