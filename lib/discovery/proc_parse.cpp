#include "discovery/proc_parse.h"

#include <cctype>
#include <charconv>
#include <climits>
#include <span>
#include <sstream>
#include <string>

#include "common/proc_status.h"
#include "common/text_file.h"
#include "discovery/text_scan.h"

namespace gpreempt::discovery {

std::vector<int> parse_nspid(std::string_view text) {
  std::vector<int> out;
  const auto field = proc_status_field(text, "NSpid");
  if (!field) return out;
  std::string_view rest = *field;
  while (!rest.empty()) {
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
    std::size_t e = 0;
    while (e < rest.size() && rest[e] != ' ' && rest[e] != '\t') ++e;
    if (e == 0) break;
    auto v = detail::parse_signed(rest.substr(0, e));
    if (!v || *v < 0 || *v > INT_MAX) return {};
    out.push_back(static_cast<int>(*v));
    rest.remove_prefix(e);
  }
  return out;
}

std::optional<int> parse_stat_ppid(std::string_view text) {
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(close + 1);
  // " <state> <ppid> "
  std::size_t i = 0;
  while (i < rest.size() && rest[i] == ' ') ++i;
  while (i < rest.size() && rest[i] != ' ') ++i;  // state
  while (i < rest.size() && rest[i] == ' ') ++i;
  std::size_t e = i;
  while (e < rest.size() && rest[e] != ' ') ++e;
  auto v = detail::parse_signed(rest.substr(i, e - i));
  if (!v || *v < 0 || *v > INT_MAX) return std::nullopt;
  return static_cast<int>(*v);
}

bool parse_stat_alive(std::string_view text) {
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos) return false;
  // After "(comm)": state, ppid, pgrp, session, tty_nr, tpgid, flags (proc(5)).
  std::istringstream rest{std::string(text.substr(close + 1))};
  char state = 0;
  long skip = 0;
  unsigned long flags = 0;
  if (!(rest >> state >> skip >> skip >> skip >> skip >> skip >> flags)) return false;
  constexpr unsigned long kPfExiting = 0x4;  // PF_EXITING (include/linux/sched.h)
  return state != 'Z' && state != 'X' && (flags & kPfExiting) == 0;
}

std::optional<std::uint64_t> parse_stat_start_time(std::string_view text) {
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(close + 1);
  // After "(comm)" come fields 3 (state) onwards: the start time is the 20th of them.
  std::size_t i = 0;
  for (int field = 3;; ++field) {
    while (i < rest.size() && rest[i] == ' ') ++i;
    std::size_t e = i;
    while (e < rest.size() && rest[e] != ' ' && rest[e] != '\n') ++e;
    if (i == e) return std::nullopt;
    if (field == 22) {
      std::uint64_t v = 0;
      for (std::size_t k = i; k < e; ++k) {
        if (rest[k] < '0' || rest[k] > '9' || v > (UINT64_MAX - 9) / 10) return std::nullopt;
        v = v * 10 + static_cast<std::uint64_t>(rest[k] - '0');
      }
      return v;
    }
    i = e;
  }
}

std::vector<std::string> parse_cmdline(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\0') continue;
    out.emplace_back(text.substr(start, i - start));
    start = i + 1;
  }
  if (start < text.size()) out.emplace_back(text.substr(start));
  return out;
}

namespace {

bool is_container_id(std::string_view s) {
  if (s.size() < 32) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    std::size_t e = path.find('/', i);
    if (e == std::string_view::npos) e = path.size();
    out.push_back(path.substr(i, e - i));
    i = e;
  }
  return out;
}

// The id in one container's own cgroup component, as the runtimes name it: "<id>" (cgroupfs
// drivers) when `bare` is allowed, "<prefix><id>" or "<prefix><id>.scope" (systemd drivers).
std::optional<std::string> id_in_component(std::string_view c, bool bare,
                                           std::span<const std::string_view> prefixes) {
  if (bare && is_container_id(c)) return std::string(c);
  for (std::string_view p : prefixes) {
    if (!c.starts_with(p)) continue;
    std::string_view id = c.substr(p.size());
    if (id.ends_with(".scope")) id.remove_suffix(6);
    if (is_container_id(id)) return std::string(id);
  }
  return std::nullopt;
}

}  // namespace

std::optional<CgroupContainer> container_in_cgroup_path(std::string_view path) {
  const auto c = components(path);
  const std::size_t n = c.size();
  auto at = [&](std::size_t i) { return i < n ? c[i] : std::string_view(); };
  auto found = [](std::optional<std::string> id, bool rootless) -> std::optional<CgroupContainer> {
    if (!id) return std::nullopt;
    return CgroupContainer{std::move(*id), rootless};
  };
  static constexpr std::string_view kScopes[] = {"docker-", "libpod-", "nerdctl-", "crio-",
                                                 "cri-containerd-"};
  static constexpr std::string_view kLibpod[] = {"libpod-"};
  static constexpr std::string_view kPayload[] = {"libpod-payload-"};
  static constexpr std::string_view kRootless[] = {"libpod-", "nerdctl-"};
  if (n < 2) return std::nullopt;
  const std::string_view top = c[0];
  // Docker's cgroupfs driver: /docker/<id>.
  if (top == "docker") return found(id_in_component(c[1], true, {}), false);
  // Rootful systemd drivers: a scope directly under the slice, or Podman's pods
  // (machine.slice/machine-libpod_pod_<pod>.slice/libpod-<id>.scope), or Podman's
  // --cgroups=split payload under a root-started service.
  if (top == "system.slice" || top == "machine.slice") {
    if (auto id = id_in_component(c[1], false, kScopes)) return found(id, false);
    if (top == "machine.slice" && c[1].starts_with("machine-libpod_pod_"))
      return found(id_in_component(at(2), false, kLibpod), false);
    if (top == "system.slice" && c[1].ends_with(".service"))
      return found(id_in_component(at(2), false, kPayload), false);
    return std::nullopt;
  }
  // Podman's cgroupfs driver: /libpod_parent/libpod-<id>, or /libpod_parent/<pod>/libpod-<id>.
  if (top == "libpod_parent") {
    if (auto id = id_in_component(c[1], false, kLibpod)) return found(id, false);
    return found(id_in_component(at(2), false, kLibpod), false);
  }
  // The kubelet: /kubepods[/<qos>]/pod<uid>/<id> (cgroupfs), or
  // /kubepods.slice[/kubepods-<qos>.slice]/kubepods[-<qos>]-pod<uid>.slice/<runtime>-<id>.scope.
  if (top == "kubepods" || top == "kubepods.slice") {
    const bool cgroupfs = top == "kubepods";
    std::size_t pod = 1;
    if (cgroupfs ? (c[1] == "burstable" || c[1] == "besteffort")
                 : (c[1] == "kubepods-burstable.slice" || c[1] == "kubepods-besteffort.slice"))
      pod = 2;
    const std::string_view p = at(pod);
    const bool is_pod = cgroupfs ? p.starts_with("pod")
                                 : p.starts_with("kubepods-") && p.ends_with(".slice") &&
                                       p.find("pod") != std::string_view::npos;
    if (!is_pod) return std::nullopt;
    return found(id_in_component(at(pod + 1), cgroupfs, kScopes), false);
  }
  // Rootless Podman and nerdctl: a scope directly under a slice of the user's own systemd
  // (user.slice/user-<uid>.slice/user@<uid>.service/<slice>/<scope>). The user names cgroups
  // there as they like, so such an id is only ever that user's claim (CgroupContainer::rootless).
  if (top == "user.slice") {
    if (n >= 5 && at(2).starts_with("user@") && at(2).ends_with(".service"))
      return found(id_in_component(at(4), false, kRootless), true);
    return std::nullopt;
  }
  // containerd's default cgroup for `ctr`/nerdctl with the cgroupfs driver: /<namespace>/<id>.
  // Only root creates a top-level cgroup; systemd's own slices are not namespaces.
  if (!top.ends_with(".slice") && !top.ends_with(".scope") && !top.ends_with(".service"))
    return found(id_in_component(c[1], true, {}), false);
  return std::nullopt;
}

std::optional<std::string> container_id_from_cgroup(std::string_view text) {
  std::optional<std::string> found;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    // "hierarchy-id:controllers:path" in /proc/PID/cgroup; a bare path as well.
    if (!line.starts_with("/")) {
      const std::size_t c1 = line.find(':');
      const std::size_t c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
      if (c2 == std::string_view::npos) continue;
      line = line.substr(c2 + 1);
    }
    if (auto c = container_in_cgroup_path(line); c && !c->rootless) found = std::move(c->id);
  }
  return found;
}

std::optional<std::uint64_t> parse_sysfs_number(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

namespace {
// A sysfs value: KFD prints these three without a newline, tolerate one anyway.
std::string_view sysfs_value(std::string_view s) {
  if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  return detail::trim(s);
}
}  // namespace

std::optional<SysfsQueueFiles> parse_sysfs_queue(std::string_view type_text, std::string_view gpuid_text,
                                                 std::string_view size_text) {
  const auto t = detail::parse_signed(sysfs_value(type_text));
  const auto g = parse_sysfs_gpu_id(gpuid_text);
  if (!t || *t < INT_MIN || *t > INT_MAX || !g) return std::nullopt;
  SysfsQueueFiles q;
  q.type = static_cast<int>(*t);
  q.gpu_id = *g;
  q.size = detail::parse_number(sysfs_value(size_text));
  return q;
}

std::optional<std::uint32_t> parse_sysfs_gpu_id(std::string_view gpuid_text) {
  const auto g = detail::parse_number(sysfs_value(gpuid_text));
  if (!g || *g > 0xffffffffull) return std::nullopt;
  return static_cast<std::uint32_t>(*g);
}

std::string sysfs_queue_type_name(std::int64_t code) {
  switch (code) {
    case 0: return "compute";
    case 1: return "sdma";
    case 2: return "hiq";
    case 3: return "sdma_xgmi";
    case 4: return "sdma_xgmi";
    default: return "type " + std::to_string(code);
  }
}

}  // namespace gpreempt::discovery
