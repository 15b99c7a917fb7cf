// Who may change gpreemptd's state over the socket (reload, operator suspend/resume): root, and
// members of the configured `control_group`. Hints are not checked here (the peer's class decides).
#pragma once

#include <optional>
#include <string>

#include "socket_server.h"

namespace gpreemptd {

// nullopt when `peer` may; otherwise the sentence saying why not (sent back as not_permitted).
// Membership counts the peer's primary gid and its supplementary groups (/proc/PID/status).
std::optional<std::string> control_refusal(const Peer& peer, const std::string& control_group,
                                           const std::string& op, const std::string& proc_root);

}  // namespace gpreemptd
