// `gpreempt doctor`'s config_trust check: what gpreemptd's config trusts (docs/security.md), for a
// reviewer — the config file's owner and mode, a single-tenant acknowledgement and the classes
// relying on it, rootless container roots (names their users write), a metrics address beyond
// loopback, the control group whose members may suspend every class.
#pragma once

#include <string>

#include "doctor/doctor.h"

namespace gpreempt::doctor {

// The default gpreemptd reads under systemd and in the shipped manifests.
inline constexpr const char* kDefaultConfigPath = "/etc/gpreempt/gpreemptd.toml";

// PASS with the trusted settings listed, WARN for each weakening (all in the summary), FAIL when
// gpreemptd would refuse the file, SKIP when there is none at `path`.
CheckResult check_config_trust(const std::string& path);

}  // namespace gpreempt::doctor
