// What a gpreemptd config trusts, as one document (docs/security.md): which classes exist and what
// their members are matched by, the single-tenant acknowledgement and the warnings it brings,
// who besides root may control the daemon, where the metrics listen, and which rootless container
// roots are read. The running daemon shows it in its full `status` (root and control_group
// members only: it tells which rules to satisfy), and `gpreempt doctor` reviews it — the running
// daemon's when one answers, else the file's.
#pragma once

#include <nlohmann/json.hpp>

#include "daemon_config.h"

namespace gpreemptd {

// {"single_tenant", "warnings": [...], "classes": [{"name", "priority", "match": [...]}],
//  "control_group", "metrics", "rootless_roots": {"podman", "containerd"}}; an unset
// string setting is null.
nlohmann::ordered_json trust_document(const DaemonConfig& c);

}  // namespace gpreemptd
