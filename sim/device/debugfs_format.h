// The two text shapes debugfs uses for KFD dumps: seq_hex_dump() with DUMP_PREFIX_OFFSET, 32-byte
// rows of 4-byte groups (mqds, rls), and the DQM's seq_reg_dump() of (register byte address,
// value) pairs (hqds). docs/kfd-interface.md#debugfs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gpreempt::sim {

// `prefix` + "%.8x: " + up to eight "%8.8x" native-endian dwords separated by one space, '\n'.
std::string seq_hex_dump(const std::string& prefix, std::span<const uint32_t> dwords);

// A line starts with "    %08x: %08x" and takes up to 7 more " %08x" while the addresses stay
// consecutive (+4); the block ends with '\n'.
std::string seq_reg_dump(const std::vector<std::pair<uint32_t, uint32_t>>& regs);

// `count` consecutive registers from `base`.
std::vector<std::pair<uint32_t, uint32_t>> register_run(uint32_t base,
                                                        std::span<const uint32_t> values);

}  // namespace gpreempt::sim
