#include "passwd_entry.h"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace gpreemptd {

bool passwd_entry(std::uint32_t uid, std::string& name, std::string& home) {
  long size = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(size > 0 ? static_cast<std::size_t>(size) : 16384);
  struct passwd pw {};
  struct passwd* found = nullptr;
  while (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == ERANGE &&
         buf.size() < (1u << 20))
    buf.resize(buf.size() * 2);
  if (!found) return false;
  name = pw.pw_name ? pw.pw_name : "";
  home = pw.pw_dir ? pw.pw_dir : "";
  return true;
}

}  // namespace gpreemptd
