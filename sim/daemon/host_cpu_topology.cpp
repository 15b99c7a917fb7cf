#include "sim/daemon/host_cpu_topology.h"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <string>

namespace gpreempt::sim::daemon {

std::optional<uint32_t> count_cpulist(std::string_view list) {
  while (!list.empty() && (list.back() == '\n' || list.back() == ' ')) list.remove_suffix(1);
  if (list.empty()) return 0u;
  uint32_t count = 0;
  while (!list.empty()) {
    auto comma = list.find(',');
    std::string_view range = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    auto dash = range.find('-');
    uint32_t lo = 0, hi = 0;
    auto parse = [](std::string_view s, uint32_t& v) {
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc() && p == s.data() + s.size() && !s.empty();
    };
    if (dash == std::string_view::npos) {
      if (!parse(range, lo)) return std::nullopt;
      hi = lo;
    } else if (!parse(range.substr(0, dash), lo) || !parse(range.substr(dash + 1), hi) || hi < lo) {
      return std::nullopt;
    }
    count += hi - lo + 1;
  }
  return count;
}

HostCpuTopology read_host_cpu_topology() {
  HostCpuTopology t;
  uint32_t nodes = 0, cpus = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/devices/system/node", ec)) {
    std::string name = e.path().filename();
    if (name.rfind("node", 0) != 0 || name.size() == 4 || name.find_first_not_of("0123456789", 4) != std::string::npos)
      continue;
    std::ifstream f(e.path() / "cpulist");
    std::string list;
    std::getline(f, list);
    if (auto n = count_cpulist(list); n && *n > 0) {
      ++nodes;
      cpus += *n;
    }
  }
  if (nodes == 0) {
    nodes = 1;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpus = online > 0 ? static_cast<uint32_t>(online) : 1;
  }
  t.numa_nodes = nodes;
  t.cores_per_node = cpus / nodes ? cpus / nodes : 1;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) t.mem_per_node = uint64_t(pages) * uint64_t(page) / nodes;
  return t;
}

}  // namespace gpreempt::sim::daemon
