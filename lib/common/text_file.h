// Reading the small text files of /proc and /sys.
//
// Plain open/read/opendir (not iostreams or std::filesystem) on purpose: the simulated KFD's
// LD_PRELOAD shim interposes exactly these libc entry points for /sys/class/kfd, so the same code
// reads the real kernel's files or the simulator's.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpreempt {

// Whole file, or nullopt (errno set) when it cannot be opened or read.
std::optional<std::string> read_text_file(const std::string& path);
// Entry names of a directory except "." and "..", sorted; nullopt (errno set) if it cannot be opened.
std::optional<std::vector<std::string>> list_directory(const std::string& path);

}  // namespace gpreempt
