#include "trust_document.h"

namespace gpreemptd {

namespace {

nlohmann::ordered_json or_null(const std::string& s) {
  return s.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s);
}

}  // namespace

nlohmann::ordered_json trust_document(const DaemonConfig& c) {
  nlohmann::ordered_json classes = nlohmann::ordered_json::array();
  for (const auto& rule : c.classes) {
    nlohmann::ordered_json match = nlohmann::ordered_json::array();
    for (const auto& m : rule.match) match.push_back(m.describe());
    classes.push_back({{"name", rule.cls.name}, {"priority", rule.cls.priority}, {"match", match}});
  }
  return {{"single_tenant", c.single_tenant},
          {"warnings", gpreempt::sched::trust_warnings(c)},
          {"classes", classes},
          {"control_group", or_null(c.daemon.control_group)},
          {"metrics", or_null(c.daemon.metrics_address)},
          {"rootless_roots",
           {{"podman", or_null(c.daemon.containers.podman_rootless)},
            {"containerd", or_null(c.daemon.containers.containerd_rootless)}}}};
}

}  // namespace gpreemptd
