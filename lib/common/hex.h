// The project's one hexadecimal formatter: "0x" and lower-case digits without padding, as the
// documented JSON schema writes addresses and as traces and messages print masks and offsets.
#pragma once

#include <cstdint>
#include <string>

namespace gpreempt {

// "0x0", "0x7f00deadbeef".
std::string hex(std::uint64_t value);

}  // namespace gpreempt
