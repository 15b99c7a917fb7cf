// The wire protocol between the kfd shim (inside every simulated process) and kfdsimd (one per
// simulated machine). One request and one reply per SOCK_SEQPACKET message, so a message's
// boundaries are the kernel's and no framing state survives a partial read.
//
// Encoding and decoding are pure functions over bytes; sim/protocol/socket_io.h moves them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpreempt::sim::protocol {

inline constexpr uint32_t kMagic = 0x5344464b;  // "KFDS" little-endian
inline constexpr uint16_t kVersion = 1;
// Ioctl args are at most _IOC_SIZE = 14 bits; replies of inspection requests (JSON) may be larger.
inline constexpr std::size_t kMaxMessage = 1 << 20;

enum class Op : uint16_t {
  // First message of a process's anchor connection: the daemon watches this process from now on
  // (exit via pidfd; exec when the close-on-exec anchor hangs up). Reply payload: HelloReply.
  kHelloProcess = 1,
  // open("/dev/kfd"): KfdDevice::open. ret = 0 or -errno.
  kOpenKfd = 2,
  // ioctl on a /dev/kfd fd: arg = request, payload = the caller's _IOC_SIZE bytes.
  // Reply: ret, payload = the bytes to copy back (always, even when ret < 0).
  kIoctl = 3,
  // mmap of a /dev/kfd fd: arg = file offset, payload = u64 length; or of a render node: payload =
  // u64 length, u32 render minor (a buffer object's offset, checked against the process's BOs).
  // Reply: ret and, when ret == 0, a memfd (SCM_RIGHTS) to map at offset 0 in place of the memory.
  kMmap = 4,
  // Bring the materialised sysfs/debugfs tree up to date before the caller looks at it: payload =
  // the guest path about to be looked up (only what it can reach is rendered), empty for all.
  kRefreshFiles = 5,
  // Inspection for kfdsim: reply payload is JSON text.
  kStatus = 6,
  kQueues = 7,
  // Stop the daemon (kfdsim stop). Reply first, then exit.
  kShutdown = 8,
  // Which GPU answers at /dev/dri/renderD<arg>: ret = 0 and payload = DrmDeviceInfo, or -ENODEV.
  kDrmDevice = 9,
  // The GPU model's records (sim/gpu): ret = 0 and payload = JSON text, or -ENODEV when the
  // machine's hardware keeps none (--hardware instant). arg = only runlist records with a larger
  // seq; a reply carries at most kGpuStatsPage records in all, oldest first per GPU ("more" on a
  // GPU: newer ones remain), so that any history of any number of GPUs fits in one message.
  kGpuStats = 10,
  // The thread whose ioctl is blocked on this connection caught a signal whose handler lacks
  // SA_RESTART: a blocked WAIT_EVENTS ends with -EINTR (KfdDevice::interrupt). Never answered
  // itself: the blocked call gets its one answer, -EINTR or the result that was already on its
  // way. Ignored when nothing is blocked (that answer crossed this message).
  kInterrupt = 11,
};
// ~400 bytes of JSON a record: a page stays well inside the default socket send buffer (208 KiB,
// net.core.wmem_default), which bounds a SOCK_SEQPACKET message before kMaxMessage does.
inline constexpr std::size_t kGpuStatsPage = 200;

struct RequestHeader {
  uint32_t magic = kMagic;
  uint16_t version = kVersion;
  uint16_t op = 0;
  int32_t pid = 0;  // calling process (tgid)
  int32_t tid = 0;  // calling thread
  uint64_t arg = 0;
  uint32_t payload_size = 0;
  uint32_t reserved = 0;
};
static_assert(sizeof(RequestHeader) == 32);

struct ReplyHeader {
  uint32_t magic = kMagic;
  uint32_t payload_size = 0;
  int64_t ret = 0;
};
static_assert(sizeof(ReplyHeader) == 16);

struct Request {
  Op op{};
  int pid = 0;
  int tid = 0;
  uint64_t arg = 0;
  std::vector<uint8_t> payload;
};

struct Reply {
  int64_t ret = 0;
  std::vector<uint8_t> payload;
};

// What a decoder found wrong, for the log line that reports a broken peer.
struct DecodeError {
  std::string what;
};

std::vector<uint8_t> encode(const Request& r);
std::vector<uint8_t> encode(const Reply& r);
// Decoders check magic, version, op range and that the payload size matches the message length.
std::optional<Request> decode_request(std::span<const uint8_t> msg, DecodeError* err = nullptr);
std::optional<Reply> decode_reply(std::span<const uint8_t> msg, DecodeError* err = nullptr);

// kHelloProcess reply: where the daemon materialises the machine's files and who it is.
struct HelloReply {
  int daemon_pid = 0;
  std::string root_dir;  // absolute; "<root>/sys/class/kfd/kfd/..." mirrors the real tree
};
std::vector<uint8_t> encode(const HelloReply& h);
std::optional<HelloReply> decode_hello(std::span<const uint8_t> payload);

// kDrmDevice reply: what the amdgpu DRM render node of one simulated GPU reports (the shim answers
// DRM_IOCTL_VERSION and DRM_IOCTL_AMDGPU_INFO from it, in the process, like Mesa's drm-shim).
struct DrmDeviceInfo {
  uint32_t render_minor = 0;
  uint32_t gpu_id = 0;
  uint32_t device_id = 0;
  uint32_t revision_id = 0;
  uint32_t gfx_target_version = 0;  // major*10000 + minor*100 + stepping
  uint32_t num_shader_engines = 0;
  uint32_t shader_arrays_per_engine = 0;
  uint32_t cu_count = 0;
  uint32_t max_engine_clock_mhz = 0;
  uint32_t wave_front_size = 0;
  uint32_t num_xcc = 0;
  uint32_t location_id = 0;  // PCI bus/dev/fn as topology's location_id
};
static_assert(sizeof(DrmDeviceInfo) == 48);
std::vector<uint8_t> encode(const DrmDeviceInfo& d);
std::optional<DrmDeviceInfo> decode_drm_device(std::span<const uint8_t> payload);

const char* op_name(Op op);

}  // namespace gpreempt::sim::protocol
