#include "control_permission.h"

#include <grp.h>

#include <algorithm>

namespace gpreemptd {

namespace {

std::optional<gid_t> group_id(const std::string& name) {
  group gr{};
  group* found = nullptr;
  char buf[4096];
  if (getgrnam_r(name.c_str(), &gr, buf, sizeof buf, &found) == 0 && found) return found->gr_gid;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> control_refusal(const Peer& peer, const std::string& control_group,
                                           const std::string& op) {
  if (peer.uid == 0) return std::nullopt;
  const std::string who =
      "uid " + std::to_string(peer.uid) + " (pid " + std::to_string(peer.pid) + ")";
  if (control_group.empty())
    return who + " may not " + op +
           ": only root may change gpreemptd's state (set [daemon] control_group in the config "
           "file to allow a group)";
  auto gid = group_id(control_group);
  if (!gid)
    return who + " may not " + op + ": only root may, since the configured control_group '" +
           control_group + "' does not exist on this machine";
  if (peer.gid == *gid || std::find(peer.groups.begin(), peer.groups.end(), *gid) != peer.groups.end())
    return std::nullopt;
  return who + " may not " + op + ": only root and members of group '" + control_group +
         "' may change gpreemptd's state";
}

}  // namespace gpreemptd
