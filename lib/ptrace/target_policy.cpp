#include "ptrace/target_policy.h"

#include <charconv>
#include <vector>

#include "common/proc_status.h"

namespace gpreempt::ptrace {

namespace {

// The whitespace-separated numbers of a status field ("Uid:\t1000\t1000\t1000\t1000").
std::vector<long long> numbers(std::string_view text, std::string_view key) {
  std::vector<long long> out;
  const auto v = proc_status_field(text, key);
  if (!v) return out;
  std::string_view rest = *v;
  while (!rest.empty()) {
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
    if (rest.empty()) break;
    long long x = 0;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), x);
    if (ec != std::errc() || p == rest.data()) return {};
    out.push_back(x);
    rest.remove_prefix(static_cast<std::size_t>(p - rest.data()));
  }
  return out;
}

bool all_equal(const std::vector<long long>& v) {
  for (auto x : v)
    if (x != v.front()) return false;
  return true;
}

}  // namespace

std::string ptrace_refusal(int pid, std::string_view status, std::uint32_t status_owner) {
  const std::string p = "process " + std::to_string(pid);
  if (pid == 1) return p + " is the node's init: stopping it would stop the node";
  const auto uid = numbers(status, "Uid"), gid = numbers(status, "Gid");
  if (uid.size() < 3 || gid.size() < 3)
    return p + ": its /proc status has no Uid/Gid lines to check (refused rather than guessed)";
  if (!all_equal(uid) || !all_equal(gid))
    return p + " runs a set-user-ID or set-group-ID program (uids " + std::to_string(uid[0]) + "/" +
           std::to_string(uid[1]) + "/" + std::to_string(uid[2]) + ", gids " +
           std::to_string(gid[0]) + "/" + std::to_string(gid[1]) + "/" + std::to_string(gid[2]) +
           " real/effective/saved): the kernel keeps debuggers of its user away from it";
  // A dumpable process's /proc/PID files are owned by its effective uid; the kernel gives a
  // non-dumpable one's to root (of its user namespace).
  if (static_cast<long long>(status_owner) != uid[1])
    return p +
           " is not dumpable (prctl(PR_SET_DUMPABLE, 0), or a setuid or file-capability "
           "program): it asked not to be debugged";
  const auto nspid = numbers(status, "NSpid");
  if (nspid.size() > 1 && nspid.back() == 1)
    return p +
           " is the init of a pid namespace (a container's first process, its reaper): run "
           "the GPU work under an init (docker run --init, tini) so it is not pid 1 there";
  return "";
}

}  // namespace gpreempt::ptrace
