// Reading files other users control, as root: /proc/PID/* of any process, and the container
// runtimes' per-container files (docs/security.md, "What gpreemptd reads"). Every read is bounded
// (a process's environment or a runtime's containers.json can be made as large as its owner
// likes) and never follows a symlink (a user who controls a directory on the path could point the
// daemon at a file only root may read).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace gpreemptd {

// One /proc/PID directory, opened once: every file read through it belongs to that same process,
// and reads fail (the process is gone) once it exits, even if its pid is reused meanwhile.
class ProcDir {
 public:
  ProcDir(const std::string& proc_root, int pid);
  ~ProcDir();
  ProcDir(const ProcDir&) = delete;
  ProcDir& operator=(const ProcDir&) = delete;

  bool open() const { return fd_ >= 0; }
  // The file `name` of the directory, at most `max_bytes` (nullopt beyond: refused, not cut, so
  // no rule matches a half-read value); nullopt (errno set) when unreadable or a symlink.
  std::optional<std::string> read(const char* name, std::size_t max_bytes) const;
  // The target of the symlink `name` (exe); nullopt when unreadable.
  std::optional<std::string> link(const char* name) const;

 private:
  int fd_ = -1;
};

// The file `relative` under the directory `root`, a regular file of at most `max_bytes`, reached
// with no symlink below `root` (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS; kernels before 5.6:
// O_NOFOLLOW on its last component). `root` itself is the administrator's word (a configured
// runtime root, which may be a symlink). nullopt with errno: ENOENT, ELOOP or EXDEV (a symlink),
// EFBIG (too large), EINVAL (not a regular file), ...
std::optional<std::string> read_file_beneath(const std::string& root, const std::string& relative,
                                             std::size_t max_bytes);

}  // namespace gpreemptd
