#include "debugfs_format.h"

#include <cstdio>

namespace gpreempt::sim {

std::string seq_hex_dump(const std::string& prefix, std::span<const uint32_t> dwords) {
  std::string s;
  char buf[16];
  for (std::size_t i = 0; i < dwords.size(); i += 8) {
    s += prefix;
    std::snprintf(buf, sizeof buf, "%.8x:", static_cast<unsigned>(i * 4));
    s += buf;
    for (std::size_t j = i; j < i + 8 && j < dwords.size(); ++j) {
      std::snprintf(buf, sizeof buf, " %8.8x", dwords[j]);
      s += buf;
    }
    s += '\n';
  }
  return s;
}

std::string seq_reg_dump(const std::vector<std::pair<uint32_t, uint32_t>>& regs) {
  std::string s;
  char buf[32];
  int left = 0;
  for (std::size_t i = 0; i < regs.size(); ++i) {
    const auto [addr, value] = regs[i];
    if (left == 0 || regs[i - 1].first + 4 != addr) {
      std::snprintf(buf, sizeof buf, "%s    %08x: %08x", i ? "\n" : "", addr, value);
      left = 7;
    } else {
      std::snprintf(buf, sizeof buf, " %08x", value);
      --left;
    }
    s += buf;
  }
  return s + "\n";
}

std::vector<std::pair<uint32_t, uint32_t>> register_run(uint32_t base,
                                                        std::span<const uint32_t> values) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (std::size_t i = 0; i < values.size(); ++i)
    out.emplace_back(base + static_cast<uint32_t>(i * 4), values[i]);
  return out;
}

}  // namespace gpreempt::sim
