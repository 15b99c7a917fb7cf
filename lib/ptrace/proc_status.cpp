#include "ptrace/proc_status.h"

#include <charconv>

#include "common/proc_status.h"
#include "common/text_file.h"

namespace gpreempt::ptrace {

namespace {
std::optional<int> field(std::string_view text, std::string_view key) {
  const auto v = proc_status_field(text, key);
  if (!v) return std::nullopt;
  int out = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || p == v->data()) return std::nullopt;
  return out;
}
}  // namespace

std::optional<int> parse_tracer_pid(std::string_view status_text) {
  return field(status_text, "TracerPid");
}
std::optional<int> parse_tgid(std::string_view status_text) { return field(status_text, "Tgid"); }
std::optional<int> parse_ppid(std::string_view status_text) { return field(status_text, "PPid"); }

std::optional<int> parent_of(int pid) {
  auto text = read_text_file("/proc/" + std::to_string(pid) + "/status");
  if (!text) return std::nullopt;
  return parse_ppid(*text);
}

std::string command_of(int pid) {
  auto text = read_text_file("/proc/" + std::to_string(pid) + "/comm");
  if (!text) return "?";
  while (!text->empty() && text->back() == '\n') text->pop_back();
  return *text;
}

std::optional<TracerInfo> tracer_of(int tid) {
  auto text = read_text_file("/proc/" + std::to_string(tid) + "/status");
  if (!text) return std::nullopt;
  auto tracer = parse_tracer_pid(*text);
  if (!tracer || *tracer == 0) return std::nullopt;
  return TracerInfo{*tracer, command_of(*tracer)};
}

}  // namespace gpreempt::ptrace
