#include "sim/protocol/messages.h"

#include <cstring>

namespace gpreempt::sim::protocol {
namespace {

bool valid_op(uint16_t op) {
  return op >= static_cast<uint16_t>(Op::kHelloProcess) && op <= static_cast<uint16_t>(Op::kInterrupt);
}

void fail(DecodeError* err, std::string what) {
  if (err) err->what = std::move(what);
}

template <typename Header>
std::vector<uint8_t> with_payload(const Header& h, std::span<const uint8_t> payload) {
  std::vector<uint8_t> out(sizeof(Header) + payload.size());
  std::memcpy(out.data(), &h, sizeof(Header));
  if (!payload.empty()) std::memcpy(out.data() + sizeof(Header), payload.data(), payload.size());
  return out;
}

}  // namespace

std::vector<uint8_t> encode(const Request& r) {
  RequestHeader h;
  h.op = static_cast<uint16_t>(r.op);
  h.pid = r.pid;
  h.tid = r.tid;
  h.arg = r.arg;
  h.payload_size = static_cast<uint32_t>(r.payload.size());
  return with_payload(h, r.payload);
}

std::vector<uint8_t> encode(const Reply& r) {
  ReplyHeader h;
  h.ret = r.ret;
  h.payload_size = static_cast<uint32_t>(r.payload.size());
  return with_payload(h, r.payload);
}

std::optional<Request> decode_request(std::span<const uint8_t> msg, DecodeError* err) {
  RequestHeader h;
  if (msg.size() < sizeof h) {
    fail(err, "request of " + std::to_string(msg.size()) + " bytes is shorter than its 32-byte header");
    return std::nullopt;
  }
  std::memcpy(&h, msg.data(), sizeof h);
  if (h.magic != kMagic) {
    fail(err, "request magic is not KFDS");
    return std::nullopt;
  }
  if (h.version != kVersion) {
    fail(err, "request has protocol version " + std::to_string(h.version) + ", expected " +
                  std::to_string(kVersion) + " (shim and daemon from different builds?)");
    return std::nullopt;
  }
  if (!valid_op(h.op)) {
    fail(err, "request has unknown op " + std::to_string(h.op));
    return std::nullopt;
  }
  if (h.payload_size != msg.size() - sizeof h) {
    fail(err, "request header announces " + std::to_string(h.payload_size) +
                  " payload bytes but the message carries " + std::to_string(msg.size() - sizeof h));
    return std::nullopt;
  }
  Request r;
  r.op = static_cast<Op>(h.op);
  r.pid = h.pid;
  r.tid = h.tid;
  r.arg = h.arg;
  r.payload.assign(msg.begin() + sizeof h, msg.end());
  return r;
}

std::optional<Reply> decode_reply(std::span<const uint8_t> msg, DecodeError* err) {
  ReplyHeader h;
  if (msg.size() < sizeof h) {
    fail(err, "reply of " + std::to_string(msg.size()) + " bytes is shorter than its 16-byte header");
    return std::nullopt;
  }
  std::memcpy(&h, msg.data(), sizeof h);
  if (h.magic != kMagic) {
    fail(err, "reply magic is not KFDS");
    return std::nullopt;
  }
  if (h.payload_size != msg.size() - sizeof h) {
    fail(err, "reply header announces " + std::to_string(h.payload_size) +
                  " payload bytes but the message carries " + std::to_string(msg.size() - sizeof h));
    return std::nullopt;
  }
  Reply r;
  r.ret = h.ret;
  r.payload.assign(msg.begin() + sizeof h, msg.end());
  return r;
}

std::vector<uint8_t> encode(const HelloReply& h) {
  std::vector<uint8_t> out(sizeof(int32_t) + h.root_dir.size());
  int32_t pid = h.daemon_pid;
  std::memcpy(out.data(), &pid, sizeof pid);
  std::memcpy(out.data() + sizeof pid, h.root_dir.data(), h.root_dir.size());
  return out;
}

std::optional<HelloReply> decode_hello(std::span<const uint8_t> payload) {
  if (payload.size() < sizeof(int32_t)) return std::nullopt;
  HelloReply h;
  int32_t pid;
  std::memcpy(&pid, payload.data(), sizeof pid);
  h.daemon_pid = pid;
  h.root_dir.assign(reinterpret_cast<const char*>(payload.data()) + sizeof pid,
                    payload.size() - sizeof pid);
  if (h.root_dir.empty() || h.root_dir[0] != '/') return std::nullopt;
  return h;
}

std::vector<uint8_t> encode(const DrmDeviceInfo& d) {
  std::vector<uint8_t> out(sizeof d);
  std::memcpy(out.data(), &d, sizeof d);
  return out;
}

std::optional<DrmDeviceInfo> decode_drm_device(std::span<const uint8_t> payload) {
  if (payload.size() != sizeof(DrmDeviceInfo)) return std::nullopt;
  DrmDeviceInfo d;
  std::memcpy(&d, payload.data(), sizeof d);
  return d;
}

const char* op_name(Op op) {
  switch (op) {
    case Op::kHelloProcess: return "hello";
    case Op::kOpenKfd: return "open";
    case Op::kIoctl: return "ioctl";
    case Op::kMmap: return "mmap";
    case Op::kRefreshFiles: return "refresh";
    case Op::kStatus: return "status";
    case Op::kQueues: return "queues";
    case Op::kShutdown: return "shutdown";
    case Op::kDrmDevice: return "drm-device";
    case Op::kGpuStats: return "gpu-stats";
    case Op::kInterrupt: return "interrupt";
  }
  return "?";
}

}  // namespace gpreempt::sim::protocol
