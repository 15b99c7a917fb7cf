#include "debugfs_format.h"

namespace gpreempt::sim {

namespace {

// "%08x" without snprintf: the renderers print hundreds of thousands of these per machine.
void append_hex8(std::string& s, uint32_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  char buf[8];
  for (int i = 7; i >= 0; --i, v >>= 4) buf[i] = kDigits[v & 0xf];
  s.append(buf, 8);
}

}  // namespace

std::string seq_hex_dump(const std::string& prefix, std::span<const uint32_t> dwords) {
  std::string s;
  s.reserve((dwords.size() / 8 + 1) * (prefix.size() + 10 + 8 * 9 + 1));
  for (std::size_t i = 0; i < dwords.size(); i += 8) {
    s += prefix;
    append_hex8(s, static_cast<uint32_t>(i * 4));
    s += ':';
    for (std::size_t j = i; j < i + 8 && j < dwords.size(); ++j) {
      s += ' ';
      append_hex8(s, dwords[j]);
    }
    s += '\n';
  }
  return s;
}

std::string seq_reg_dump(const std::vector<std::pair<uint32_t, uint32_t>>& regs) {
  std::string s;
  s.reserve(regs.size() * 12 + 16);
  int left = 0;
  for (std::size_t i = 0; i < regs.size(); ++i) {
    const auto [addr, value] = regs[i];
    if (left == 0 || regs[i - 1].first + 4 != addr) {
      if (i) s += '\n';
      s += "    ";
      append_hex8(s, addr);
      s += ": ";
      append_hex8(s, value);
      left = 7;
    } else {
      s += ' ';
      append_hex8(s, value);
      --left;
    }
  }
  return s + "\n";
}

std::vector<std::pair<uint32_t, uint32_t>> register_run(uint32_t base,
                                                        std::span<const uint32_t> values) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  out.reserve(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    out.emplace_back(base + static_cast<uint32_t>(i * 4), values[i]);
  return out;
}

}  // namespace gpreempt::sim
