#include "process_facts_reader.h"

#include <unistd.h>

#include <set>
#include <sstream>

#include "bounded_file.h"
#include "discovery/proc_parse.h"
#include "passwd_entry.h"
#include "sched/cgroup_identity.h"

namespace gpreemptd {

using gpreempt::sched::ProcessFacts;
using gpreempt::sched::ProcessKey;

namespace {

// Bounds on what one /proc file of a process may hold (bounded_file.h): stat and status are a
// few hundred bytes; a command line and an environment are as long as their owner makes them
// (a larger one is refused, so its rules match nothing rather than a cut value).
constexpr std::size_t kMaxStat = 4096, kMaxStatus = 64u << 10, kMaxCgroup = 64u << 10,
                      kMaxArgs = 1u << 20;

// open(2)/read(2) through ProcDir, never an ifstream: a process reaped between the open and the
// read makes read fail with ESRCH, which libstdc++'s filebuf turns into an exception whatever the
// stream's mask. Here any failure means what it means for /proc: the process is gone (or the file
// unreadable).
std::optional<std::string> stat_of(const std::string& proc_root, int pid) {
  return ProcDir(proc_root, pid).read("stat", kMaxStat);
}

// The real uid: the first number of the "Uid:" line of /proc/PID/status.
std::optional<uint32_t> real_uid(const std::string& status) {
  std::istringstream in(status);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Uid:", 0) == 0) {
      std::istringstream f(line.substr(4));
      uint32_t uid;
      if (f >> uid) return uid;
    }
  return std::nullopt;
}

std::string user_name(uint32_t uid) {
  std::string name, home;
  return passwd_entry(uid, name, home) ? name : std::string();
}

}  // namespace

std::optional<ProcessKey> read_process_key(const std::string& proc_root, int pid) {
  auto stat = stat_of(proc_root, pid);
  if (!stat) return std::nullopt;
  auto start = gpreempt::discovery::parse_stat_start_time(*stat);
  if (!start) return std::nullopt;
  return ProcessKey{pid, *start};
}

bool exiting_or_gone(const std::string& proc_root, const ProcessKey& key) {
  auto stat = stat_of(proc_root, key.pid);
  if (!stat) return true;
  return gpreempt::discovery::parse_stat_start_time(*stat) != key.start_time_ticks ||
         !gpreempt::discovery::parse_stat_alive(*stat);
}

std::optional<ProcessFacts> read_process_facts(const std::string& proc_root, int pid,
                                               ContainerResolver* containers) {
  // Every file through one descriptor: all of them are this process's, even if it exits and its
  // pid is reused while they are read.
  const ProcDir dir(proc_root, pid);
  auto stat = dir.read("stat", kMaxStat);
  if (!stat) return std::nullopt;
  auto start = gpreempt::discovery::parse_stat_start_time(*stat);
  auto ppid = gpreempt::discovery::parse_stat_ppid(*stat);
  if (!start || !ppid) return std::nullopt;
  ProcessFacts f;
  f.key = {pid, *start};
  f.ppid = *ppid;
  if (auto c = dir.read("cmdline", kMaxArgs)) f.cmdline = gpreempt::discovery::parse_cmdline(*c);
  if (auto exe = dir.link("exe")) {
    f.exe = std::move(*exe);
    const std::string deleted = " (deleted)";
    if (f.exe.size() > deleted.size() && f.exe.ends_with(deleted))
      f.exe.resize(f.exe.size() - deleted.size());
  }
  if (auto s = dir.read("status", kMaxStatus))
    if (auto uid = real_uid(*s)) {
      f.uid = *uid;
      f.user = user_name(*uid);
    }
  if (auto c = dir.read("cgroup", kMaxCgroup)) f.cgroups = gpreempt::sched::parse_cgroup_paths(*c);
  if (containers)
    for (const auto& path : f.cgroups)
      if (const ContainerInfo* info = containers->lookup_cgroup(path)) {
        f.container_name = info->name;
        f.pod_name = info->pod_name;
        f.pod_namespace = info->pod_namespace;
        break;
      }
  if (auto e = dir.read("environ", kMaxArgs)) {
    std::size_t start_at = 0;
    for (std::size_t i = 0; i <= e->size(); ++i) {
      if (i < e->size() && (*e)[i] != '\0') continue;
      std::string_view kv(e->data() + start_at, i - start_at);
      start_at = i + 1;
      auto eq = kv.find('=');
      if (eq == std::string_view::npos || eq == 0) continue;
      f.environ.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
    }
  }
  return f;
}

std::vector<ProcessFacts> read_ancestors(const std::string& proc_root, const ProcessFacts& facts,
                                         ContainerResolver* containers) {
  std::vector<ProcessFacts> out;
  std::set<int> seen{facts.key.pid};
  int ppid = facts.ppid;
  while (ppid > 1 && seen.insert(ppid).second) {
    auto p = read_process_facts(proc_root, ppid, containers);
    if (!p) break;
    ppid = p->ppid;
    out.push_back(std::move(*p));
  }
  return out;
}

}  // namespace gpreemptd
