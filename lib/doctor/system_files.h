// The files `gpreempt doctor` reads (/proc, /sys, /sys/kernel/debug), under a root directory, so
// tests can hand it a fake tree. With the root "/" the paths are used exactly as given, which also
// lets the simulator's shim answer the KFD ones.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpreempt::doctor {

class SystemFiles {
 public:
  explicit SystemFiles(std::string root = "/");

  // `absolute` ("/proc/mounts") as a path under the root.
  std::string path(std::string_view absolute) const;
  // The whole file, or nullopt with the errno in *error (ENOENT, EACCES, ...).
  std::optional<std::string> read(std::string_view absolute, int* error = nullptr) const;
  // The first line of a file without its newline (module parameters, sysctls).
  std::optional<std::string> read_line(std::string_view absolute, int* error = nullptr) const;
  bool exists(std::string_view absolute) const;
  const std::string& root() const { return root_; }

 private:
  std::string root_;  // without a trailing slash; empty for "/"
};

}  // namespace gpreempt::doctor
