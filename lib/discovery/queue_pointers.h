// Where each KFD compute queue of a process keeps its read and write pointers, and a reader that
// samples them from outside the process without ptrace-attaching it (docs/transparent.md).
//
// On ROCm both pointers are 64-bit AQL dispatch ids inside the runtime's `amd_queue_t`, in the
// process's host memory: write_dispatch_id at +0x38 (the producer, ROCr, bumps it when it publishes
// a packet) and read_dispatch_id at +0x80 (the command processor writes it as packets are retired).
// KFD learns both addresses from CREATE_QUEUE (write_pointer_address / read_pointer_address) and
// programs them into the MQD as CP_HQD_PQ_WPTR_POLL_ADDR and CP_HQD_PQ_RPTR_REPORT_ADDR (MQD dwords
// 141-142 and 139-140, docs/kfd-interface.md#gfx9-mqd), which debugfs `mqds` prints: root can find
// them for any process without a debug session. The real MI308X capture shows the two 0x48 apart,
// as the amd_queue_t layout predicts; the simulator's runtime (simrt) builds the same block.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "discovery/queue_map.h"

namespace gpreempt::discovery {

// One compute queue whose two dispatch ids can be sampled.
struct QueuePointers {
  int pid = 0;
  std::uint32_t gpu_id = 0;
  std::optional<std::uint32_t> queue_id;  // from sysfs (or inferred, see queue_id_inferred)
  bool queue_id_inferred = false;
  std::uint64_t ring_base = 0;
  std::uint64_t rptr_address = 0;  // amd_queue_t::read_dispatch_id
  std::uint64_t wptr_address = 0;  // amd_queue_t::write_dispatch_id
  auto operator<=>(const QueuePointers&) const = default;
};

// The compute queues of `pid` in `map` that have both addresses. SDMA queues are left out (their
// pointers are byte offsets of a different ring, and the MQD does not carry the write pointer
// address); each queue left out is explained in `notes` when given.
std::vector<QueuePointers> queue_pointers(const QueueMap& map, int pid,
                                          std::vector<std::string>* notes = nullptr);

struct QueuePointerSources {
  std::string debugfs = "/sys/kernel/debug/kfd";  // holds mqds (root only)
  std::string kfd_sysfs = "/sys/class/kfd/kfd";   // holds proc/<pid>/queues (real queue ids)
};

// Reads debugfs mqds (and the process's sysfs queue ids) now and returns `pid`'s queues. Throws
// gpreempt::Error naming the file and the errno when mqds cannot be read (EACCES: debugfs needs
// root) or is not an mqds dump (EINVAL).
std::vector<QueuePointers> read_queue_pointers(int pid, const QueuePointerSources& src = {},
                                               std::vector<std::string>* notes = nullptr);

// One sample of a queue's dispatch ids (64-bit, they never wrap in practice).
struct PointerSample {
  std::uint64_t rptr = 0;
  std::uint64_t wptr = 0;
  auto operator<=>(const PointerSample&) const = default;
};

// Samples the pointers of many queues of one process with one process_vm_readv call (up to 512
// queues per call: IOV_MAX remote iovecs of 8 bytes). The read pointer is read before the write
// pointer of the same queue: both only grow and rptr <= wptr, so a sample never shows rptr > wptr.
// process_vm_readv needs what a PTRACE_MODE_ATTACH_REALCREDS check allows (same uid and a Yama
// scope that permits it, or CAP_SYS_PTRACE) but attaches nothing. Only when it is refused
// (EPERM — e.g. a container's seccomp profile — or ENOSYS) does the reader fall back to pread on
// /proc/PID/mem, and says so in method_note().
class PointerReader {
 public:
  enum class Method { kProcessVmReadv, kProcMem };

  PointerReader(int pid, std::vector<QueuePointers> queues);
  ~PointerReader();
  PointerReader(const PointerReader&) = delete;
  PointerReader& operator=(const PointerReader&) = delete;

  int pid() const { return pid_; }
  const std::vector<QueuePointers>& queues() const { return queues_; }
  // Samples in the order of queues(), valid until the next call. Throws gpreempt::Error with the
  // errno: ESRCH when the process is gone, EFAULT naming the first address that could not be read,
  // EPERM/EACCES when neither method is allowed (both reasons in the message).
  const std::vector<PointerSample>& sample();
  Method method() const { return method_; }
  // Empty while process_vm_readv works; otherwise why /proc/PID/mem is used.
  const std::string& method_note() const { return method_note_; }

  // Tests: behave as if process_vm_readv had been refused with this errno.
  void simulate_process_vm_readv_refusal(int error) { simulated_refusal_ = error; }

 private:
  // false when process_vm_readv was refused (refused_errno set).
  bool sample_vm_readv(int& refused_errno);
  void sample_proc_mem();
  [[noreturn]] void fail(int error, std::uint64_t address, const char* how) const;

  int pid_;
  std::vector<QueuePointers> queues_;
  std::vector<PointerSample> samples_;
  std::vector<struct iovec> remote_;  // rptr, wptr of each queue, built once
  Method method_ = Method::kProcessVmReadv;
  std::string method_note_;
  int mem_fd_ = -1;
  int simulated_refusal_ = 0;
};

}  // namespace gpreempt::discovery
