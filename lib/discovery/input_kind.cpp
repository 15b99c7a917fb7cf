#include "discovery/input_kind.h"

#include "common/text_file.h"
#include "discovery/text_scan.h"

namespace gpreempt::discovery {

using detail::starts_with;

std::string_view describe(InputKind k) {
  switch (k) {
    case InputKind::properties: return "a KFD topology properties file";
    case InputKind::mqds: return "debugfs mqds output";
    case InputKind::hqds: return "debugfs hqds output";
    case InputKind::rls: return "debugfs rls output";
    case InputKind::hip_log: return "a HIP runtime log (AMD_LOG_LEVEL)";
    case InputKind::rocminfo: return "rocminfo output";
    case InputKind::rocm_smi: return "rocm-smi output";
    case InputKind::unknown: break;
  }
  return "an unrecognised file";
}

std::optional<std::string> command_for(InputKind k, std::string_view file) {
  // Display names such as "<stdin>" are not paths a command line could take.
  const std::string f(file.empty() || file.front() == '<' ? "FILE" : file);
  switch (k) {
    case InputKind::properties: return "gpreempt decode properties " + f;
    case InputKind::mqds: return "gpreempt decode mqds " + f;
    case InputKind::hqds: return "gpreempt decode hqds " + f;
    case InputKind::rls: return "gpreempt decode rls " + f;
    case InputKind::hip_log: return "gpreempt log analyze " + f;
    default: return std::nullopt;
  }
}

std::string wrong_kind_message(InputKind found, InputKind expected, std::string_view file) {
  std::string m = "this looks like " + std::string(describe(found)) + ", not " +
                  std::string(describe(expected));
  if (auto cmd = command_for(found, file))
    m += ": try `" + *cmd + "`";
  else
    m += ", which gpreempt does not decode";
  return m;
}

namespace {

bool is_lower_ident(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return s[0] >= 'a' && s[0] <= 'z';
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// "<key> <unsigned decimal>", the only line shape of a topology properties file.
bool property_line(std::string_view t) {
  const std::size_t sp = t.find(' ');
  return sp != std::string_view::npos && is_lower_ident(t.substr(0, sp)) &&
         all_digits(detail::trim(t.substr(sp)));
}

// A HIP runtime log record: ":<level>:<source file>:<line> : <time> us: ...".
bool log_record(std::string_view t) {
  if (t.size() < 4 || t[0] != ':' || t[1] < '0' || t[1] > '9' || t[2] != ':') return false;
  const std::string_view rest = t.substr(3, 96);
  return rest.find(".cpp") != std::string_view::npos || rest.find(".hpp") != std::string_view::npos ||
         rest.find(".h ") != std::string_view::npos;
}

bool contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

bool node_header(std::string_view t) {
  return starts_with(t, "Node ") && contains(t, ", gpu_id ") && !t.empty() && t.back() == ':';
}

bool mqds_line(std::string_view t) {
  if (starts_with(t, "Process ") && contains(t, " PASID ") && t.back() == ':') return true;
  if (!contains(t, " on device ")) return false;
  return starts_with(t, "Compute queue on device ") || starts_with(t, "SDMA queue on device ") ||
         starts_with(t, "DIQ on device ") || starts_with(t, "Bad user queue type ") ||
         starts_with(t, "Queue node with bad user queue type ");
}

bool hqds_slot_header(std::string_view t) {
  if (starts_with(t, "Inst ")) {
    const std::size_t comma = t.find(',');
    if (comma == std::string_view::npos) return false;
    t = detail::trim(t.substr(comma + 1));
  }
  return (starts_with(t, "HIQ on MEC ") && contains(t, " Pipe ")) ||
         (starts_with(t, "CP Pipe ") && contains(t, ", Queue ")) ||
         (starts_with(t, "SDMA Engine ") && contains(t, ", RLC "));
}

}  // namespace

void InputSniffer::feed(std::string_view line) {
  if (decided_) return;
  const std::string_view t = detail::trim(line);
  if (t.empty()) return;
  ++seen_;
  if (mqds_line(t)) return decide(InputKind::mqds);
  if (hqds_slot_header(t) || t == "Device is stopped") return decide(InputKind::hqds);
  if (t == "No active runlist") return decide(InputKind::rls);
  if (log_record(t)) return decide(InputKind::hip_log);
  if (contains(t, "ROCk module") || contains(t, "HSA System Attributes") || contains(t, "HSA Agents"))
    return decide(InputKind::rocminfo);
  if (contains(t, "ROCm System Management Interface")) return decide(InputKind::rocm_smi);
  // hqds prints a slot header or "Device is stopped" right after every node header; only rls
  // follows it with dump rows.
  if (after_node_header_ && detail::parse_hex_row(line)) return decide(InputKind::rls);
  after_node_header_ = node_header(t);
  if (property_line(t)) ++property_lines_;
  // An abort dump of the HIP runtime (no record prefix) names the hardware queue.
  if (starts_with(t, "Kernel Name: ") || contains(t, "HWq=0x")) log_hints_ = true;
  if (property_lines_ == seen_ && property_lines_ >= 2) return decide(InputKind::properties);
  if (seen_ >= kWindow) decide(kind());
}

InputKind InputSniffer::kind() const {
  if (decided_) return kind_;
  if (seen_ > 0 && property_lines_ == seen_) return InputKind::properties;
  if (log_hints_) return InputKind::hip_log;
  return InputKind::unknown;
}

InputKind sniff_input(std::string_view text) {
  InputSniffer s;
  TextLines lines(text);
  std::string_view line;
  while (!s.decided() && lines.next(line)) s.feed(line);
  return s.kind();
}

}  // namespace gpreempt::discovery
