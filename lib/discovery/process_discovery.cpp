#include "discovery/process_discovery.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>
#include <system_error>

#include "common/error.h"
#include "common/text_file.h"
#include "discovery/diagnostics.h"
#include "discovery/proc_parse.h"
#include "discovery/text_scan.h"

namespace gpreempt::discovery {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> slurp(const fs::path& p) { return read_text_file(p.string()); }

std::optional<int> as_pid(const std::string& name) {
  if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  auto v = detail::parse_number(name);
  if (!v || *v > 0x7fffffff) return std::nullopt;
  return static_cast<int>(*v);
}

// The numerically named entries of `dir`, ascending. A listing that failed gives what was read
// before; `error` (when given) gets its errno, 0 when the listing was whole.
std::vector<int> numeric_dirs(const fs::path& dir, int* error = nullptr) {
  std::vector<int> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (auto pid = as_pid(it->path().filename().string())) out.push_back(*pid);
  if (error) *error = ec.value();
  std::sort(out.begin(), out.end());
  return out;
}

bool has_fd_on(const fs::path& fd_dir, const std::string& device, bool& unreadable) {
  std::error_code ec;
  fs::directory_iterator it(fd_dir, ec);
  if (ec) {
    unreadable = true;
    return false;
  }
  for (fs::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    std::error_code lec;
    const fs::path target = fs::read_symlink(it->path(), lec);
    if (!lec && target == device) return true;
  }
  return false;
}

}  // namespace

std::vector<int> kfd_users(const SystemRoots& roots, std::size_t* unreadable) {
  std::vector<int> out;
  std::size_t skipped = 0;
  for (int pid : numeric_dirs(roots.proc)) {
    bool denied = false;
    if (has_fd_on(fs::path(roots.proc) / std::to_string(pid) / "fd", roots.kfd_device, denied)) out.push_back(pid);
    if (denied) ++skipped;
  }
  if (unreadable) *unreadable = skipped;
  return out;
}

namespace {

// A read failure `error` (an errno) goes to *out, or is thrown when the caller gave none.
// Compared by value: std::error_code's comparisons call its category's virtual functions.
void read_failed(int error, const std::string& what, int* out) {
  if (out) {
    *out = error;
    return;
  }
  throw std::system_error(error, std::generic_category(), what);
}

}  // namespace

std::vector<int> kfd_sysfs_processes(const SystemRoots& roots, int* error) {
  if (error) *error = 0;
  const fs::path dir = fs::path(roots.kfd_sysfs) / "proc";
  int listing = 0;
  std::vector<int> out = numeric_dirs(dir, &listing);
  if (listing == ENOENT) return {};
  if (listing) {
    read_failed(listing, "cannot list " + dir.string(), error);
    return {};
  }
  return out;
}

namespace {

// One queues/<id> directory, the only reader of these files. nullopt with `problem` empty: the
// queue vanished while it was read (its files are gone); with `problem` set: what is wrong.
std::optional<SysfsQueue> read_queue_dir(const fs::path& q, std::uint32_t id, std::string& problem) {
  problem.clear();
  auto type = slurp(q / "type"), gpuid = slurp(q / "gpuid"), size = slurp(q / "size");
  if (!type || !gpuid || !size) return std::nullopt;
  auto files = parse_sysfs_queue(*type, *gpuid, *size);
  if (!files || files->type < 0 || !files->size) {
    problem = q.string() + ": expected unsigned decimal type, gpuid and size files, got type " +
              quote_line(*type) + ", gpuid " + quote_line(*gpuid) + ", size " + quote_line(*size);
    return std::nullopt;
  }
  SysfsQueue out;
  out.queue_id = id;
  out.type = static_cast<std::uint32_t>(files->type);
  out.gpu_id = files->gpu_id;
  out.size = *files->size;
  return out;
}

}  // namespace

std::vector<KnownQueue> sysfs_queues(const SystemRoots& roots, int pid, std::vector<std::string>* problems) {
  std::vector<KnownQueue> out;
  const fs::path dir = fs::path(roots.kfd_sysfs) / "proc" / std::to_string(pid) / "queues";
  std::string problem;
  for (int id : numeric_dirs(dir)) {
    const fs::path q = dir / std::to_string(id);
    auto sq = read_queue_dir(q, static_cast<std::uint32_t>(id), problem);
    if (!sq) {
      if (problems) problems->push_back(problem.empty() ? q.string() + ": unreadable (type, gpuid or size)" : problem);
      continue;
    }
    KnownQueue k;
    k.pid = pid;
    k.queue_id = sq->queue_id;
    k.gpu_id = sq->gpu_id;
    k.type = sysfs_queue_type_name(sq->type);
    k.ring_size = sq->size;
    k.source = "sysfs";
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<QueueGpu> sysfs_queue_gpus(const SystemRoots& roots, int pid,
                                       std::vector<std::string>* problems, int* error) {
  if (error) *error = 0;
  std::vector<QueueGpu> out;
  const fs::path dir = fs::path(roots.kfd_sysfs) / "proc" / std::to_string(pid) / "queues";
  // Only a missing file means a missing queue: a reader out of descriptors (or memory) would
  // otherwise report a process's queues gone, and its scheduler would stop counting them.
  auto unexplained = [](int error) { return error != ENOENT && error != ENOTDIR && error != ESRCH; };
  int listing = 0;
  const std::vector<int> ids = numeric_dirs(dir, &listing);
  if (listing && unexplained(listing)) {
    read_failed(listing, "cannot list " + dir.string(), error);
    return {};
  }
  for (int id : ids) {
    const fs::path file = dir / std::to_string(id) / "gpuid";
    auto text = slurp(file);
    if (const int e = errno; !text && unexplained(e)) {
      read_failed(e, "cannot read " + file.string(), error);
      return {};
    }
    if (!text) continue;  // the queue was destroyed meanwhile
    auto gpu = parse_sysfs_gpu_id(*text);
    if (!gpu) {
      if (problems)
        problems->push_back(file.string() + ": expected an unsigned decimal gpu id, got " +
                            quote_line(*text));
      continue;
    }
    out.push_back({static_cast<std::uint32_t>(id), *gpu});
  }
  return out;
}

std::vector<SysfsQueue> read_process_queues(int pid, const SystemRoots& roots) {
  const fs::path dir = fs::path(roots.kfd_sysfs) / "proc" / std::to_string(pid) / "queues";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(ESRCH, "process " + std::to_string(pid) + " has no KFD queues directory (" +
                           dir.string() + "): it has not opened /dev/kfd, or it has exited");
  std::vector<SysfsQueue> out;
  std::string problem;
  for (int id : numeric_dirs(dir)) {
    auto sq = read_queue_dir(dir / std::to_string(id), static_cast<std::uint32_t>(id), problem);
    if (!problem.empty()) throw Error(EIO, problem);
    if (sq) out.push_back(*sq);
  }
  return out;  // numeric_dirs lists ids in ascending order
}

ProcessInfo describe_process(const SystemRoots& roots, int pid) {
  ProcessInfo info;
  info.pid = pid;
  const fs::path dir = fs::path(roots.proc) / std::to_string(pid);
  if (auto status = slurp(dir / "status")) {
    info.nspid = parse_nspid(*status);
    if (info.nspid.size() > 1 && info.nspid.back() != pid) info.container_pid = info.nspid.back();
  } else {
    info.problems.push_back((dir / "status").string() + ": unreadable");
  }
  if (auto cmd = slurp(dir / "cmdline")) info.cmdline = parse_cmdline(*cmd);
  if (auto cg = slurp(dir / "cgroup")) info.container_id = container_id_from_cgroup(*cg);
  bool denied = false;
  info.has_kfd_open = has_fd_on(dir / "fd", roots.kfd_device, denied);
  if (denied) info.problems.push_back((dir / "fd").string() + ": not readable (needs the same user or root)");
  std::error_code ec;
  info.has_kfd_sysfs = fs::is_directory(fs::path(roots.kfd_sysfs) / "proc" / std::to_string(pid), ec);
  if (info.has_kfd_sysfs) info.queues = sysfs_queues(roots, pid, &info.problems);
  return info;
}

std::vector<ProcessInfo> gpu_processes(const SystemRoots& roots, const std::optional<std::string>& container_id) {
  std::set<int> pids;
  for (int p : kfd_users(roots)) pids.insert(p);
  for (int p : kfd_sysfs_processes(roots)) pids.insert(p);
  std::vector<ProcessInfo> out;
  for (int p : pids) {
    ProcessInfo info = describe_process(roots, p);
    if (container_id && (!info.container_id || info.container_id->rfind(*container_id, 0) != 0)) continue;
    out.push_back(std::move(info));
  }
  return out;
}

std::optional<int> host_pid_of(const SystemRoots& roots, int container_pid, const std::string& container_id) {
  std::optional<int> found;
  for (int pid : numeric_dirs(roots.proc)) {
    const fs::path dir = fs::path(roots.proc) / std::to_string(pid);
    auto status = slurp(dir / "status");
    if (!status) continue;
    auto ns = parse_nspid(*status);
    if (ns.size() < 2 || ns.back() != container_pid) continue;
    if (!container_id.empty()) {
      auto cg = slurp(dir / "cgroup");
      auto id = cg ? container_id_from_cgroup(*cg) : std::nullopt;
      if (!id || id->rfind(container_id, 0) != 0) continue;
    }
    if (found) return std::nullopt;  // ambiguous: the same pid in two containers
    found = pid;
  }
  return found;
}

std::optional<int> parent_pid(const SystemRoots& roots, int pid) {
  auto stat = slurp(fs::path(roots.proc) / std::to_string(pid) / "stat");
  if (!stat) return std::nullopt;
  return parse_stat_ppid(*stat);
}

std::optional<std::uint64_t> live_start_time(const SystemRoots& roots, int pid) {
  auto stat = slurp(fs::path(roots.proc) / std::to_string(pid) / "stat");
  if (!stat || !parse_stat_alive(*stat)) return std::nullopt;
  return parse_stat_start_time(*stat);
}

bool descends_from(const SystemRoots& roots, int pid, int ancestor) {
  for (int hops = 0; hops < 64 && pid > 1; ++hops) {
    if (pid == ancestor) return true;
    auto p = parent_pid(roots, pid);
    if (!p) return false;
    pid = *p;
  }
  return pid == ancestor;
}

std::optional<int> container_pid_of(const SystemRoots& roots, int host_pid) {
  auto status = slurp(fs::path(roots.proc) / std::to_string(host_pid) / "status");
  if (!status) return std::nullopt;
  auto ns = parse_nspid(*status);
  if (ns.empty()) return std::nullopt;
  return ns.back();
}

}  // namespace gpreempt::discovery
