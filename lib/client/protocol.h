// The gpreemptd socket protocol, both directions, in one place: the daemon's server and every
// client (the C ABI gpreempt_client_*, Python, `gpreempt ctl`, `gpreempt top`) encode and decode
// through these functions and nothing else (docs/protocol.md is the prose form).
//
// Framing: a Unix SOCK_STREAM socket carrying newline-delimited JSON (one object per line, at most
// kMaxLineBytes including the newline), so `socat - UNIX:/run/gpreempt/gpreemptd.sock` can talk to
// it. Every message a client sends gets exactly one reply, in order; the reply echoes the
// message's `seq`. The daemon identifies the peer by SO_PEERCRED, never by anything it says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpreempt::client {

inline constexpr int kProtocolVersion = 1;
inline constexpr const char* kDefaultSocketPath = "/run/gpreempt/gpreemptd.sock";
inline constexpr const char* kSocketEnv = "GPREEMPT_SOCKET";
inline constexpr std::size_t kMaxLineBytes = 64 * 1024;

// $GPREEMPT_SOCKET when set and non-empty, else kDefaultSocketPath.
std::string default_socket_path();

enum class Op {
  kHello,    // who am I to the daemon: its version, my class, whether my hints count
  kBegin,    // hint: request `request` of the peer process starts now
  kEnd,      // hint: it finished (optionally with its output `tokens`, an LLM request)
  kToken,    // hint: LLM request `request` has produced `tokens` output tokens (1: its first)
  kExpect,   // hint: a request will start in about `in_us`
  kStatus,   // the status document (`gpreempt ctl status --json`)
  kSuspend,  // operator: suspend `target` for `for_ms` (control permission)
  kResume,   // operator: end an operator suspension of `target` now (control permission)
  kReload,   // operator: re-read the config file, as SIGHUP does (control permission)
};
const char* to_string(Op op);        // "hello", "begin", ...
std::optional<Op> op_named(std::string_view name);
// Ops that change state for others: only root or the configured group may send them.
bool needs_control_permission(Op op);

// What an operator command applies to: a class, or one process, optionally on one GPU only
// (KFD gpu_id). Exactly one of class_name / pid is set.
struct Target {
  std::optional<std::string> class_name;
  std::optional<int> pid;
  std::optional<uint32_t> gpu_id;
};

struct Message {
  Op op = Op::kHello;
  uint64_t seq = 0;       // chosen by the client; echoed in the reply
  uint64_t request = 0;   // kBegin / kEnd / kToken: unique among the peer's open requests
  int64_t in_us = 0;      // kExpect: > 0
  Target target;          // kSuspend / kResume
  int64_t for_ms = 0;     // kSuspend: > 0 (the daemon still applies its hard bound)
  // kToken: output tokens so far (>= 1; absent on the wire: 1, the first token). kEnd: the
  // request's output tokens, 0 (absent on the wire) when the client does not say.
  uint64_t tokens = 0;
};

// Why a message was refused; the strings are the wire form (`"error": "not_permitted"`).
enum class ErrorCode {
  kBadRequest,          // malformed JSON, unknown op, missing or invalid field
  kUnsupportedVersion,  // `v` is not kProtocolVersion
  kNotPermitted,        // control op from a peer without permission; hint from a class that may not preempt
  kUnknownTarget,       // no such class / process / GPU
  kUnavailable,         // the daemon cannot do it now (shutting down, GPU cannot suspend, ...)
  kInternal,
};
const char* to_string(ErrorCode code);
std::optional<ErrorCode> error_code_named(std::string_view name);

struct Reply {
  uint64_t seq = 0;
  bool ok = true;
  ErrorCode error = ErrorCode::kInternal;  // meaningful when !ok
  std::string message;                     // when !ok: a sentence saying why, for humans
  nlohmann::ordered_json body = nlohmann::ordered_json::object();  // op-specific result fields
};

Reply ok_reply(uint64_t seq, nlohmann::ordered_json body = nlohmann::ordered_json::object());
Reply error_reply(uint64_t seq, ErrorCode error, std::string message);

// A decoding failure: what was wrong with the line, ready to be sent back as kBadRequest /
// kUnsupportedVersion. `seq` is the line's seq when it could be read, else 0.
struct ProtocolError {
  ErrorCode code = ErrorCode::kBadRequest;
  uint64_t seq = 0;
  std::string message;
};

// One line each, ending in '\n'.
std::string encode(const Message& m);
std::string encode(const Reply& r);

// `line` without its newline. Throws ProtocolError.
Message decode_message(std::string_view line);
Reply decode_reply(std::string_view line);

// Reassembles lines from a byte stream. feed() returns the complete lines (without '\n') the
// bytes finished; a line longer than kMaxLineBytes throws ProtocolError (the peer is then
// disconnected: framing is lost).
class LineReader {
 public:
  std::vector<std::string> feed(std::string_view bytes);
  std::size_t pending() const { return partial_.size(); }

 private:
  std::string partial_;
};

}  // namespace gpreempt::client
