// `gpreempt doctor`'s config_trust check: what gpreemptd's config trusts (docs/security.md), for a
// reviewer — a single-tenant acknowledgement and the classes relying on it, rootless container
// roots (names their users write), a metrics address beyond loopback, the control group whose
// members may suspend every class. The running daemon's settings when it answers (what is in
// force), else the file's (what it would load), plus the file's owner and mode.
#pragma once

#include <string>

#include "doctor/doctor.h"

namespace gpreempt::doctor {

// The default gpreemptd reads under systemd and in the shipped manifests.
inline constexpr const char* kDefaultConfigPath = "/etc/gpreempt/gpreemptd.toml";

// PASS with the trusted settings listed, WARN for each weakening (all in the summary), FAIL when
// gpreemptd would refuse the file, SKIP when there is no file at `path` and no daemon answered.
// `running`: the daemon's answer; its full status's trust document (gpreemptd/trust_document.h) is
// reviewed instead of the file, and a file at its config path that now trusts otherwise is a WARN
// (a reload would change what is trusted).
CheckResult check_config_trust(const std::string& path, const RunningDaemon* running = nullptr);

}  // namespace gpreempt::doctor
