// The real host behind the simulated KFD: the kernel facts the device asks about are read from
// the live system, so the ptrace check is the real one (TracerPid in /proc) and the debugger's
// event fd is the very file in its fd table.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "sim/device/kfd_device.h"

namespace gpreempt::sim::daemon {

// Pure parsers of /proc/<tid>/status text (tests feed them captured text).
struct ProcStatus {
  int tgid = 0;
  int tracer_pid = 0;
  bool has_mm = false;  // a "VmSize:" line: the task has an address space (not a kernel thread or zombie)
};
std::optional<ProcStatus> parse_proc_status(const std::string& text);

class LinuxHostEnv final : public HostEnv {
 public:
  std::optional<int> tgid_of(int tid) override;
  int tracer_of(int tid) override;
  bool read_memory(int pid, uint64_t addr, void* dst, std::size_t len) override;
  bool write_memory(int pid, uint64_t addr, const void* src, std::size_t len) override;
  // pidfd_open + pidfd_getfd: a duplicate of `fd` from `pid`'s table, like the kernel's fget.
  std::optional<int> acquire_file(int pid, int fd) override;
  void release_file(int handle) override;
  bool same_file(int handle_a, int handle_b) override;
  void signal_file(int handle) override;
  // A file is the simulated render node `minor` when it is the placeholder at `path` (the shim
  // opens that file for /dev/dri/renderD<minor>): its device and inode name it.
  void add_render_node(uint32_t minor, const std::string& path);
  std::optional<uint32_t> drm_render_minor(int handle) override;

 private:
  std::optional<ProcStatus> status_of(int tid);
  std::map<std::pair<dev_t, ino_t>, uint32_t> render_nodes_;
};

}  // namespace gpreempt::sim::daemon
