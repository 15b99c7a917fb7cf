// The passwd database's entry of a uid (getpwuid_r, growing its buffer as the entry needs): the
// user name a `user` rule matches, and the home a rootless engine's per-user root expands from.
#pragma once

#include <cstdint>
#include <string>

namespace gpreemptd {

// False when the uid has no entry (name and home are then left as they were).
bool passwd_entry(std::uint32_t uid, std::string& name, std::string& home);

}  // namespace gpreemptd
