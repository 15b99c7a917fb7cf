#include "client/protocol.h"

#include <array>
#include <cstdlib>
#include <utility>

namespace gpreempt::client {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::array<std::pair<Op, const char*>, 9> kOps{{
    {Op::kHello, "hello"},
    {Op::kBegin, "begin"},
    {Op::kEnd, "end"},
    {Op::kToken, "token"},
    {Op::kExpect, "expect"},
    {Op::kStatus, "status"},
    {Op::kSuspend, "suspend"},
    {Op::kResume, "resume"},
    {Op::kReload, "reload"},
}};

constexpr std::array<std::pair<ErrorCode, const char*>, 6> kErrors{{
    {ErrorCode::kBadRequest, "bad_request"},
    {ErrorCode::kUnsupportedVersion, "unsupported_version"},
    {ErrorCode::kNotPermitted, "not_permitted"},
    {ErrorCode::kUnknownTarget, "unknown_target"},
    {ErrorCode::kUnavailable, "unavailable"},
    {ErrorCode::kInternal, "internal"},
}};

[[noreturn]] void fail(uint64_t seq, std::string message,
                       ErrorCode code = ErrorCode::kBadRequest) {
  throw ProtocolError{code, seq, std::move(message)};
}

Json parse_object(std::string_view line) {
  Json j = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) fail(0, "the line is not JSON");
  if (!j.is_object()) fail(0, "the line is JSON but not an object");
  return j;
}

// Reads `key` as an unsigned integer; absent → nullopt; any other type or a negative → error.
std::optional<uint64_t> unsigned_field(const Json& j, const char* key, uint64_t seq) {
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  if (!it->is_number_unsigned()) {
    fail(seq, std::string("\"") + key + "\" must be a non-negative integer");
  }
  return it->get<uint64_t>();
}

uint64_t seq_and_version(const Json& j) {
  const uint64_t seq = unsigned_field(j, "seq", 0).value_or(0);
  auto v = j.find("v");
  if (v == j.end()) fail(seq, "\"v\" (the protocol version) is missing");
  if (!v->is_number_integer() || v->get<int64_t>() != kProtocolVersion) {
    fail(seq,
         "protocol version " + v->dump() + " is not supported (this side speaks " +
             std::to_string(kProtocolVersion) + ")",
         ErrorCode::kUnsupportedVersion);
  }
  return seq;
}

uint64_t required_positive(const Json& j, const char* key, uint64_t seq, const char* op) {
  auto value = unsigned_field(j, key, seq);
  if (!value || *value == 0) {
    fail(seq, std::string("\"") + op + "\" needs \"" + key + "\", a positive integer");
  }
  return *value;
}

}  // namespace

std::string default_socket_path() {
  const char* env = std::getenv(kSocketEnv);
  return env != nullptr && *env != '\0' ? env : kDefaultSocketPath;
}

const char* to_string(Op op) {
  for (const auto& [o, name] : kOps) {
    if (o == op) return name;
  }
  return "?";
}

std::optional<Op> op_named(std::string_view name) {
  for (const auto& [o, n] : kOps) {
    if (name == n) return o;
  }
  return std::nullopt;
}

bool needs_control_permission(Op op) {
  return op == Op::kSuspend || op == Op::kResume || op == Op::kReload;
}

const char* to_string(ErrorCode code) {
  for (const auto& [c, name] : kErrors) {
    if (c == code) return name;
  }
  return "internal";
}

std::optional<ErrorCode> error_code_named(std::string_view name) {
  for (const auto& [c, n] : kErrors) {
    if (name == n) return c;
  }
  return std::nullopt;
}

Reply ok_reply(uint64_t seq, nlohmann::ordered_json body) {
  Reply r;
  r.seq = seq;
  r.ok = true;
  r.body = std::move(body);
  return r;
}

Reply error_reply(uint64_t seq, ErrorCode error, std::string message) {
  Reply r;
  r.seq = seq;
  r.ok = false;
  r.error = error;
  r.message = std::move(message);
  return r;
}

std::string encode(const Message& m) {
  Json j;
  j["v"] = kProtocolVersion;
  j["seq"] = m.seq;
  j["op"] = to_string(m.op);
  switch (m.op) {
    case Op::kBegin:
      j["request"] = m.request;
      break;
    case Op::kEnd:
      j["request"] = m.request;
      if (m.tokens > 0) j["tokens"] = m.tokens;  // old daemons ignore fields they do not know
      break;
    case Op::kToken:
      j["request"] = m.request;
      if (m.tokens > 1) j["tokens"] = m.tokens;
      break;
    case Op::kExpect:
      j["in_us"] = m.in_us;
      break;
    case Op::kSuspend:
    case Op::kResume:
      if (m.target.class_name) j["class"] = *m.target.class_name;
      if (m.target.pid) j["pid"] = *m.target.pid;
      if (m.target.gpu_id) j["gpu_id"] = *m.target.gpu_id;
      if (m.op == Op::kSuspend) j["for_ms"] = m.for_ms;
      break;
    case Op::kHello:
    case Op::kStatus:
    case Op::kReload:
      break;
  }
  return j.dump() + "\n";
}

std::string encode(const Reply& r) {
  Json j;
  j["v"] = kProtocolVersion;
  j["seq"] = r.seq;
  j["ok"] = r.ok;
  if (r.ok) {
    j["result"] = r.body;
  } else {
    j["error"] = to_string(r.error);
    j["message"] = r.message;
  }
  return j.dump() + "\n";
}

Message decode_message(std::string_view line) {
  const Json j = parse_object(line);
  Message m;
  m.seq = seq_and_version(j);
  auto op = j.find("op");
  if (op == j.end() || !op->is_string()) fail(m.seq, "\"op\" (a string) is missing");
  auto known = op_named(op->get<std::string>());
  if (!known) fail(m.seq, "unknown op \"" + op->get<std::string>() + "\"");
  m.op = *known;
  switch (m.op) {
    case Op::kBegin:
      m.request = required_positive(j, "request", m.seq, to_string(m.op));
      break;
    case Op::kEnd:
    case Op::kToken:
      m.request = required_positive(j, "request", m.seq, to_string(m.op));
      if (auto t = unsigned_field(j, "tokens", m.seq)) {
        if (*t == 0) fail(m.seq, std::string("\"tokens\" of \"") + to_string(m.op) + "\" must be positive");
        m.tokens = *t;
      } else if (m.op == Op::kToken) {
        m.tokens = 1;
      }
      break;
    case Op::kExpect:
      m.in_us = static_cast<int64_t>(required_positive(j, "in_us", m.seq, "expect"));
      break;
    case Op::kSuspend:
    case Op::kResume: {
      if (auto c = j.find("class"); c != j.end()) {
        if (!c->is_string() || c->get<std::string>().empty()) {
          fail(m.seq, "\"class\" must be a non-empty string");
        }
        m.target.class_name = c->get<std::string>();
      }
      if (auto pid = unsigned_field(j, "pid", m.seq)) {
        if (*pid == 0 || *pid > 0x7fffffff) fail(m.seq, "\"pid\" must be a positive pid");
        m.target.pid = static_cast<int>(*pid);
      }
      if (m.target.class_name.has_value() == m.target.pid.has_value()) {
        fail(m.seq, std::string("\"") + to_string(m.op) +
                        "\" needs exactly one of \"class\" and \"pid\"");
      }
      if (auto gpu = unsigned_field(j, "gpu_id", m.seq)) {
        if (*gpu > 0xffffffffu) fail(m.seq, "\"gpu_id\" must fit in 32 bits");
        m.target.gpu_id = static_cast<uint32_t>(*gpu);
      }
      if (m.op == Op::kSuspend) {
        m.for_ms = static_cast<int64_t>(required_positive(j, "for_ms", m.seq, "suspend"));
      }
      break;
    }
    case Op::kHello:
    case Op::kStatus:
    case Op::kReload:
      break;
  }
  return m;
}

Reply decode_reply(std::string_view line) {
  const Json j = parse_object(line);
  Reply r;
  r.seq = seq_and_version(j);
  auto ok = j.find("ok");
  if (ok == j.end() || !ok->is_boolean()) fail(r.seq, "\"ok\" (true or false) is missing");
  r.ok = ok->get<bool>();
  if (r.ok) {
    auto result = j.find("result");
    if (result != j.end()) {
      if (!result->is_object()) fail(r.seq, "\"result\" must be an object");
      r.body = *result;
    }
    return r;
  }
  auto error = j.find("error");
  if (error == j.end() || !error->is_string()) fail(r.seq, "\"error\" (a string) is missing");
  auto code = error_code_named(error->get<std::string>());
  // A newer daemon may invent codes: keep the reply, classed as internal, with its message.
  r.error = code.value_or(ErrorCode::kInternal);
  auto message = j.find("message");
  r.message = message != j.end() && message->is_string() ? message->get<std::string>()
                                                         : error->get<std::string>();
  return r;
}

std::vector<std::string> LineReader::feed(std::string_view bytes) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < bytes.size()) {
    const std::size_t nl = bytes.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? bytes.size() : nl;
    partial_.append(bytes.substr(start, end - start));
    if (partial_.size() + 1 > kMaxLineBytes) {
      partial_.clear();
      fail(0, "a line is longer than " + std::to_string(kMaxLineBytes) + " bytes");
    }
    if (nl == std::string_view::npos) break;
    lines.push_back(std::move(partial_));
    partial_.clear();
    start = nl + 1;
  }
  return lines;
}

}  // namespace gpreempt::client
