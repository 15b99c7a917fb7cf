#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <span>

#include "common/error.h"
#include "common/hex.h"
#include "common/trace.h"
#include "kfd/dbg_trap.h"
#include "kfd/driver.h"

namespace gpreempt::kfd {

namespace {

class LinuxKfdDriver final : public KfdDriver {
 public:
  LinuxKfdDriver(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~LinuxKfdDriver() override { ::close(fd_); }
  LinuxKfdDriver(const LinuxKfdDriver&) = delete;
  LinuxKfdDriver& operator=(const LinuxKfdDriver&) = delete;

  long get_version(Version& out) override {
    kfd_ioctl_get_version_args args{};
    const long r = raw(AMDKFD_IOC_GET_VERSION, &args);
    out.major = args.major_version;
    out.minor = args.minor_version;
    return r;
  }
  long dbg_trap(kfd_ioctl_dbg_trap_args& args) override { return raw(AMDKFD_IOC_DBG_TRAP, &args); }
  std::string describe() const override { return path_; }

 private:
  long raw(unsigned long request, void* args) {
    int r = ::ioctl(fd_, request, args);
    return r < 0 ? -static_cast<long>(errno) : static_cast<long>(r);
  }
  int fd_;
  std::string path_;
};

// "ids=[3,5|invalid,7|error|invalid]": the queue-id array with its per-queue status bits
// (docs/kfd-interface.md#suspend-queues), which is what explains a partial suspend. Bounded, since
// the array can be long.
std::string describe_ids(const kfd_ioctl_dbg_trap_args& a) {
  const std::span<uint32_t> ids = queue_id_array(a);
  if (ids.empty()) return "";
  constexpr std::size_t kMaxShown = 256;
  std::string s = " ids=[";
  for (std::size_t i = 0; i < ids.size() && i < kMaxShown; ++i) {
    if (i) s += ',';
    s += std::to_string(ids[i] & KFD_DBG_QUEUE_ID_MASK);
    if (ids[i] & KFD_DBG_QUEUE_ERROR_MASK) s += "|error";
    if (ids[i] & KFD_DBG_QUEUE_INVALID_MASK) s += "|invalid";
  }
  if (ids.size() > kMaxShown) s += ",... " + std::to_string(ids.size() - kMaxShown) + " more";
  return s + "]";
}

std::string describe_args(const kfd_ioctl_dbg_trap_args& a) {
  std::string s = "pid=" + std::to_string(a.pid) + " op=" + dbg_trap_op_name(a.op);
  switch (a.op) {
    case KFD_IOC_DBG_TRAP_ENABLE:
      return s + " mask=" + hex(a.enable.exception_mask) + " rinfo_size=" +
             std::to_string(a.enable.rinfo_size) + " dbg_fd=" + std::to_string(a.enable.dbg_fd);
    case KFD_IOC_DBG_TRAP_SUSPEND_QUEUES:
      return s + " mask=" + hex(a.suspend_queues.exception_mask) +
             " num_queues=" + std::to_string(a.suspend_queues.num_queues) +
             " grace=" + hex(a.suspend_queues.grace_period) + describe_ids(a);
    case KFD_IOC_DBG_TRAP_RESUME_QUEUES:
      return s + " num_queues=" + std::to_string(a.resume_queues.num_queues) + describe_ids(a);
    case KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT:
      return s + " mask=" + hex(a.queue_snapshot.exception_mask) +
             " num_queues=" + std::to_string(a.queue_snapshot.num_queues) +
             " entry_size=" + std::to_string(a.queue_snapshot.entry_size);
    case KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT:
      return s + " mask=" + hex(a.query_debug_event.exception_mask) +
             " gpu_id=" + std::to_string(a.query_debug_event.gpu_id) +
             " queue_id=" + std::to_string(a.query_debug_event.queue_id);
    case KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT:
      return s + " mask=" + hex(a.send_runtime_event.exception_mask);
    case KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED:
      return s + " mask=" + hex(a.set_exceptions_enabled.exception_mask);
    default:
      return s;
  }
}

class TracingDriver final : public KfdDriver {
 public:
  explicit TracingDriver(std::unique_ptr<KfdDriver> inner) : inner_(std::move(inner)) {}
  long get_version(Version& out) override {
    auto t0 = std::chrono::steady_clock::now();
    long r = inner_->get_version(out);
    if (trace_enabled())
      emit_trace({"kfd", "GET_VERSION", "",
                  "major=" + std::to_string(out.major) + " minor=" + std::to_string(out.minor), r,
                  elapsed(t0)});
    return r;
  }
  long dbg_trap(kfd_ioctl_dbg_trap_args& args) override {
    if (!trace_enabled()) return inner_->dbg_trap(args);
    std::string in = describe_args(args);
    auto t0 = std::chrono::steady_clock::now();
    long r = inner_->dbg_trap(args);
    emit_trace({"kfd", std::string("DBG_TRAP ") + dbg_trap_op_name(args.op), in,
                describe_args(args), r, elapsed(t0)});
    return r;
  }
  std::string describe() const override { return inner_->describe(); }

 private:
  static uint64_t elapsed(std::chrono::steady_clock::time_point t0) {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now() - t0)
                                     .count());
  }
  std::unique_ptr<KfdDriver> inner_;
};

}  // namespace

const char* dbg_trap_op_name(uint32_t op) {
  static const char* const names[] = {
      "ENABLE",          "DISABLE",          "SEND_RUNTIME_EVENT",      "SET_EXCEPTIONS_ENABLED",
      "SET_WAVE_LAUNCH_OVERRIDE", "SET_WAVE_LAUNCH_MODE", "SUSPEND_QUEUES", "RESUME_QUEUES",
      "SET_NODE_ADDRESS_WATCH",   "CLEAR_NODE_ADDRESS_WATCH", "SET_FLAGS", "QUERY_DEBUG_EVENT",
      "QUERY_EXCEPTION_INFO",     "GET_QUEUE_SNAPSHOT",       "GET_DEVICE_SNAPSHOT"};
  return op < std::size(names) ? names[op] : "UNKNOWN_OP";
}

std::unique_ptr<KfdDriver> make_tracing_driver(std::unique_ptr<KfdDriver> inner) {
  return std::make_unique<TracingDriver>(std::move(inner));
}

std::unique_ptr<KfdDriver> open_linux_driver(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    std::string hint;
    if (e == ENOENT)
      hint = " (no AMD GPU driver here; on a machine without a GPU run under `kfdsim run -- ...`)";
    else if (e == EACCES || e == EPERM)
      hint = " (add yourself to the 'render' group or run as root)";
    throw Error(e, "cannot open " + path + ": " + errno_text(e) + hint);
  }
  return make_tracing_driver(std::make_unique<LinuxKfdDriver>(fd, path));
}

}  // namespace gpreempt::kfd
