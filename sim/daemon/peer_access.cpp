#include "sim/daemon/peer_access.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <system_error>

namespace gpreempt::sim::daemon {
namespace {

void set_mode(const std::string& path, mode_t mode) {
  if (::chmod(path.c_str(), mode) != 0)
    throw std::system_error(errno, std::generic_category(), "cannot share " + path + " (chmod)");
}

}  // namespace

void share_machine(const protocol::MachinePaths& paths) {
  set_mode(paths.dir, 0755);
  set_mode(paths.socket, 0666);
  // O_NOFOLLOW: the directory was the owner's alone until now, but a lock path made a symlink
  // would send the chmod elsewhere.
  const int lock = ::open(paths.lock().c_str(), O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (lock < 0 || ::fchmod(lock, 0644) != 0) {
    const int e = errno;
    if (lock >= 0) ::close(lock);
    throw std::system_error(e, std::generic_category(), "cannot share " + paths.lock());
  }
  ::close(lock);
  set_mode(paths.root(), 0755);
  set_mode(paths.root() + "/sys/kernel/debug", 0700);
}

std::string may_act_as(uid_t peer_uid, int pid) {
  // The status file's uids, not the owner of /proc/PID: a non-dumpable process's directory is
  // root's whatever its user.
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (pid > 0 && std::getline(status, line)) {
    if (line.compare(0, 4, "Uid:") != 0) continue;
    std::istringstream uids(line.substr(4));
    unsigned real = 0, effective = 0;
    if (!(uids >> real >> effective)) break;
    if (real == peer_uid || effective == peer_uid) return "";
    return "process " + std::to_string(pid) + " is uid " + std::to_string(effective) +
           "'s, not the caller's (uid " + std::to_string(peer_uid) + ")";
  }
  return "no such process " + std::to_string(pid);
}

bool is_machine_admin(uid_t peer_uid) { return peer_uid == 0 || peer_uid == ::geteuid(); }

}  // namespace gpreempt::sim::daemon
