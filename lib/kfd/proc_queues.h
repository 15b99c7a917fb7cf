// A process's queues as per-process sysfs shows them (FACTS §13.2): /sys/class/kfd/kfd/proc/<pid>/
// queues/<queue_id>/{size,type,gpuid}. Readable without root and without a debug session, so a
// process can list its own queues and anyone can see which queue ids a pid owns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpreempt::kfd {

inline constexpr const char* kProcRoot = "/sys/class/kfd/kfd/proc";

struct SysfsQueue {
  uint32_t queue_id = 0;
  uint32_t gpu_id = 0;
  uint32_t type = 0;  // kernel-internal enum: COMPUTE 0, SDMA 1, HIQ 2, SDMA_XGMI 3 (newest)
  uint64_t size = 0;  // ring size in bytes
};

// Parses one of the value files ("%llu"/"%d"/"%u", no trailing newline on the real kernel; a
// newline is tolerated). nullopt when it is not an unsigned decimal number.
std::optional<uint64_t> parse_sysfs_number(std::string_view text);

// "compute", "sdma", "hiq", "sdma_xgmi" or "type <n>".
std::string sysfs_queue_type_name(uint32_t type);

// Queues of `pid`, sorted by id. Throws gpreempt::Error(ESRCH) when the pid has no KFD process
// directory (it never opened /dev/kfd, or it exited), and Error(EIO) naming the file when a value
// file is malformed.
std::vector<SysfsQueue> read_process_queues(int pid, const std::string& root = kProcRoot);

}  // namespace gpreempt::kfd
