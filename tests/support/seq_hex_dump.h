// The kernel's seq_hex_dump of 32-bit words (DUMP_PREFIX_OFFSET, 32 bytes per row, 4-byte
// groups), as debugfs mqds ("    ") and rls ("  ") print it: builds test inputs for the decoders.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace gpreempt::testing {

inline std::string seq_hex_dump(const std::vector<std::uint32_t>& dw, const std::string& prefix) {
  std::string s;
  char buf[32];
  for (std::size_t i = 0; i < dw.size(); i += 8) {
    std::snprintf(buf, sizeof buf, "%.8zx:", i * 4);
    s += prefix + buf;
    for (std::size_t k = i; k < i + 8 && k < dw.size(); ++k) {
      std::snprintf(buf, sizeof buf, " %.8x", dw[k]);
      s += buf;
    }
    s += "\n";
  }
  return s;
}

}  // namespace gpreempt::testing
