// What /proc says about a task: its tracer and its command name. Parsers take text; the readers
// around them do the I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpreempt::ptrace {

// The TracerPid field of /proc/<tid>/status text (0 = not traced); nullopt if absent/malformed.
std::optional<int> parse_tracer_pid(std::string_view status_text);
// The Tgid field of /proc/<tid>/status text.
std::optional<int> parse_tgid(std::string_view status_text);
// The PPid field (the real parent, not the tracer) of /proc/<tid>/status text.
std::optional<int> parse_ppid(std::string_view status_text);

struct TracerInfo {
  int pid = 0;        // tracer's task id (TracerPid)
  std::string comm;   // its command name, "?" when unreadable
};

// The tracer of task `tid`, if any; nullopt when not traced or when /proc cannot be read.
std::optional<TracerInfo> tracer_of(int tid);
// The real parent of `pid` (also while it is a zombie), or nullopt.
std::optional<int> parent_of(int pid);
// /proc/<pid>/comm without the newline; "?" when unreadable.
std::string command_of(int pid);

}  // namespace gpreempt::ptrace
