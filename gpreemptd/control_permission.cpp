#include "control_permission.h"

#include <grp.h>

#include <fstream>
#include <sstream>

namespace gpreemptd {

namespace {

std::optional<gid_t> group_id(const std::string& name) {
  group gr{};
  group* found = nullptr;
  char buf[4096];
  if (getgrnam_r(name.c_str(), &gr, buf, sizeof buf, &found) == 0 && found) return found->gr_gid;
  return std::nullopt;
}

bool in_supplementary_groups(const std::string& proc_root, pid_t pid, gid_t gid) {
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Groups:", 0) == 0) {
      std::istringstream g(line.substr(7));
      gid_t v;
      while (g >> v)
        if (v == gid) return true;
    }
  return false;
}

}  // namespace

std::optional<std::string> control_refusal(const Peer& peer, const std::string& control_group,
                                           const std::string& op, const std::string& proc_root) {
  if (peer.uid == 0) return std::nullopt;
  const std::string who =
      "uid " + std::to_string(peer.uid) + " (pid " + std::to_string(peer.pid) + ")";
  if (control_group.empty())
    return who + " may not " + op +
           ": only root may change gpreemptd's state (set [daemon] control_group " +
           "in the config file to allow a group)";
  auto gid = group_id(control_group);
  if (!gid)
    return who + " may not " + op + ": only root may, since the configured control_group '" +
           control_group + "' does not exist on this machine";
  if (peer.gid == *gid || in_supplementary_groups(proc_root, peer.pid, *gid)) return std::nullopt;
  return who + " may not " + op + ": only root and members of group '" + control_group +
         "' may change gpreemptd's state";
}

}  // namespace gpreemptd
