// The host's CPUs as KFD topology's CPU nodes would describe them. Clients such as libhsakmt
// cross-check every CPU node against the host (/sys/devices/system/node/node<N>, /proc/cpuinfo),
// so a machine simulated on this host must describe this host's CPUs, not the captured machine's.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpreempt::sim::daemon {

struct HostCpuTopology {
  uint32_t numa_nodes = 1;
  uint32_t cores_per_node = 1;  // KFD's CPU nodes are uniform here: total CPUs / nodes
  uint64_t mem_per_node = 0;    // bytes of RAM, likewise split evenly (0: unknown)
};

// Pure: number of CPUs in a kernel cpulist ("0-3,8,10-11" → 7); nullopt if malformed.
std::optional<uint32_t> count_cpulist(std::string_view list);

// Reads /sys/devices/system/node/node*/cpulist (falls back to one node with all online CPUs).
HostCpuTopology read_host_cpu_topology();

}  // namespace gpreempt::sim::daemon
