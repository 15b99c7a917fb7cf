// Who may change gpreemptd's state over the socket (reload, operator suspend/resume) and read the
// full status (every user's processes and command lines, the classes' rules): root, and members of
// the configured `control_group`. Hints are not checked here (the peer's class decides).
#pragma once

#include <optional>
#include <string>

#include "socket_server.h"

namespace gpreemptd {

// nullopt when `peer` may; otherwise the sentence saying why not (sent back as not_permitted).
// Membership counts the peer's primary gid and the supplementary groups it had when it connected
// (Peer::groups, SO_PEERGROUPS): never what its pid's /proc files say now.
std::optional<std::string> control_refusal(const Peer& peer, const std::string& control_group,
                                           const std::string& op);

}  // namespace gpreemptd
