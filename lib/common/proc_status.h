// The one reader of /proc/<pid>/status lines (proc(5): "Key:\tvalue", one field a line). Every
// layer reads a field or two (ptrace: TracerPid, PPid; discovery: NSpid; doctor: CapEff), so it
// lives below them all; what a field's value means stays with its reader.
#pragma once

#include <optional>
#include <string_view>

namespace gpreempt {

// The value of the first "`key`:" line of `status_text`, without the blanks after the colon;
// nullopt without such a line. A key is matched whole ("Tgid" is not "TgidX").
std::optional<std::string_view> proc_status_field(std::string_view status_text, std::string_view key);

}  // namespace gpreempt
