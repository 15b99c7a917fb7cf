#include "sim/daemon/host_env_linux.h"

#include <fcntl.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace gpreempt::sim::daemon {

std::optional<ProcStatus> parse_proc_status(const std::string& text) {
  ProcStatus s;
  bool have_tgid = false;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    std::string value = line.substr(colon + 1);
    if (key == "Tgid") {
      s.tgid = std::stoi(value);
      have_tgid = true;
    } else if (key == "TracerPid") {
      s.tracer_pid = std::stoi(value);
    } else if (key == "VmSize") {
      s.has_mm = true;
    }
  }
  if (!have_tgid) return std::nullopt;
  return s;
}

std::optional<ProcStatus> LinuxHostEnv::status_of(int tid) {
  if (tid <= 0) return std::nullopt;
  std::ifstream f("/proc/" + std::to_string(tid) + "/status");
  if (!f) return std::nullopt;
  std::ostringstream ss;
  ss << f.rdbuf();
  return parse_proc_status(ss.str());
}

std::optional<int> LinuxHostEnv::tgid_of(int tid) {
  auto s = status_of(tid);
  if (!s || !s->has_mm) return std::nullopt;
  return s->tgid;
}

int LinuxHostEnv::tracer_of(int tid) {
  auto s = status_of(tid);
  return s ? s->tracer_pid : 0;
}

bool LinuxHostEnv::read_memory(int pid, uint64_t addr, void* dst, std::size_t len) {
  if (len == 0) return true;
  iovec local{dst, len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

bool LinuxHostEnv::write_memory(int pid, uint64_t addr, const void* src, std::size_t len) {
  if (len == 0) return true;
  iovec local{const_cast<void*>(src), len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return process_vm_writev(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

std::optional<int> LinuxHostEnv::acquire_file(int pid, int fd) {
  if (fd < 0) return std::nullopt;
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return std::nullopt;
  int handle = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
  close(pidfd);
  if (handle < 0) return std::nullopt;
  return handle;
}

void LinuxHostEnv::release_file(int handle) { close(handle); }

bool LinuxHostEnv::same_file(int handle_a, int handle_b) {
  // kcmp(KCMP_FILE) compares the struct file behind two descriptors, as the kernel's pointer
  // comparison does (our handles are pidfd_getfd copies: the same files as the caller's).
  const pid_t self = getpid();
  const long r = syscall(SYS_kcmp, self, self, KCMP_FILE, handle_a, handle_b);
  if (r >= 0) return r == 0;
  static bool reported = false;
  if (!reported) {
    reported = true;
    std::fprintf(stderr, "kfdsimd: kcmp(KCMP_FILE) failed (%s): ACQUIRE_VM takes any file as the one it holds\n",
                 std::strerror(errno));
  }
  return true;
}

void LinuxHostEnv::add_render_node(uint32_t minor, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw gpreempt::Error(errno, "cannot stat render node placeholder " + path + ": " +
                                     std::strerror(errno));
  render_nodes_[{st.st_dev, st.st_ino}] = minor;
}

std::optional<uint32_t> LinuxHostEnv::drm_render_minor(int handle) {
  struct stat st {};
  if (::fstat(handle, &st) != 0) return std::nullopt;
  auto it = render_nodes_.find({st.st_dev, st.st_ino});
  if (it == render_nodes_.end()) return std::nullopt;
  return it->second;
}

void LinuxHostEnv::signal_file(int handle) {
  // The file's own flags belong to its owner (a blocking pipe stays blocking for them), so "never
  // block" is checked with poll: the daemon is the only writer that matters and writes one byte.
  pollfd p{handle, POLLOUT, 0};
  if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT)) {
    char dot = '.';
    (void)!write(handle, &dot, 1);
  }
}

}  // namespace gpreempt::sim::daemon
