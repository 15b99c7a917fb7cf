#include "sched/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "common/text_file.h"
#include "sched/class_trust.h"
#include "sched/config_loader.h"
#include "sched/toml_fields.h"

namespace gpreempt::sched {

std::string ConfigError::to_string() const {
  return line > 0 ? file + ":" + std::to_string(line) + ": " + message : file + ": " + message;
}

Config builtin_config() {
  return builtin_config(static_cast<std::uint32_t>(::geteuid()));
}

Config builtin_config(std::uint32_t trusted_uid) {
  Config c;
  c.source = "built-in";
  for (auto [name, priority] : {std::pair<const char*, int>{"online", 10}, {"offline", 0}}) {
    ClassRule r;
    r.cls.name = name;
    r.cls.priority = priority;
    MatchRule m;
    if (priority > 0) {
      r.cls.triggers = {RequestSource::kHint, RequestSource::kTransparent};
      m.uid = trusted_uid;
    }
    m.env = EnvCondition{"GPREEMPT_CLASS", *Glob::parse(name, nullptr)};
    r.match.push_back(std::move(m));
    c.classes.push_back(std::move(r));
  }
  return c;
}

using config_loading::Loader;

namespace config_loading {

ConfigResult Loader::run(std::string_view text) {
  ConfigResult out;
  Config c = builtin_config();
  c.source = file_;
  toml::table root;
  try {
    root = toml::parse(text, file_);
  } catch (const toml::parse_error& e) {
    error(static_cast<int>(e.source().begin.line), std::string(e.description()));
    out.errors = std::move(errors_);
    return out;
  }
  for (auto&& [k, v] : root) {
    if (k == "class") {  // without [[class]], the built-in classes stay
      c.classes = classes(k, v);
    } else if (k == "policy") {
      if (auto* t = table(k, v)) policy(*t, c);
    } else if (std::find(other_tables_.begin(), other_tables_.end(), std::string(k.str())) !=
               other_tables_.end()) {
      continue;  // the caller's
    } else {
      error(line_of(k), "unknown key '" + std::string(k.str()) + "' (expected " + expected() + ")");
    }
  }
  check_time_slices(c);
  check_trust(c);
  // toml++ iterates tables in key order; report in file order.
  std::stable_sort(errors_.begin(), errors_.end(),
                   [](const ConfigError& a, const ConfigError& b) { return a.line < b.line; });
  if (errors_.empty()) {
    for (auto& w : trust_warnings(c)) out.warnings.push_back({file_, single_tenant_line_, w});
    out.config = std::move(c);
  }
  out.errors = std::move(errors_);
  return out;
}

std::string Loader::expected() const {
  std::vector<std::string> all{"[[class]]", "[policy]"};
  for (const auto& t : other_tables_) all.push_back("[" + t + "]");
  std::string out;
  for (std::size_t i = 0; i < all.size(); ++i)
    out += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + all[i];
  return out;
}

}  // namespace config_loading

std::vector<std::string> trust_warnings(const Config& c) {
  std::vector<std::string> out;
  if (!c.single_tenant) return out;
  int lowest = c.classes.empty() ? 0 : c.classes.front().cls.priority;
  for (const auto& r : c.classes) lowest = std::min(lowest, r.cls.priority);
  std::string relying;
  for (const auto& r : c.classes) {
    if (r.cls.priority == lowest) continue;
    for (const auto& m : r.match)
      if (!self_declared_problem(m).empty()) {
        relying += std::string(relying.empty() ? "" : ", ") + "class '" + r.cls.name + "' (" +
                   m.describe() + ")";
        break;
      }
  }
  out.push_back(
      "single_tenant = true: every local user is trusted; " +
      (relying.empty()
           ? std::string("no class relies on it yet, but any rule added may match "
                         "what a process sets itself")
           : "any process can put itself in " + relying + " and suspend the classes below it"));
  return out;
}

ConfigResult load_config(std::string_view text, const std::string& file_name,
                         std::vector<std::string> other_tables) {
  return Loader(file_name, std::move(other_tables)).run(text);
}

std::string config_file_problem(std::uint32_t owner, std::uint32_t mode,
                                std::uint32_t daemon_euid) {
  if (owner != 0 && owner != daemon_euid)
    return "owned by uid " + std::to_string(owner) + ", not by root" +
           (daemon_euid != 0 ? " or the daemon's own uid " + std::to_string(daemon_euid) : "") +
           ": whoever writes the config decides who preempts whom (chown root:root FILE)";
  if (mode & (S_IWGRP | S_IWOTH))
    return std::string("writable by its ") + ((mode & S_IWOTH) ? "world" : "group") +
           ": whoever writes the config decides who preempts whom (chmod go-w FILE)";
  return "";
}

ConfigText read_config_text(const std::string& path) {
  ConfigText r;
  // One descriptor for the check and the read, so the file checked is the file read. Symlinks are
  // followed (a Kubernetes ConfigMap volume is one); what counts is the file they reach.
  // O_NONBLOCK: a FIFO named as the config must not block the open (it is refused below).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    r.error = ConfigError{path, 0, std::string("cannot read: ") + std::strerror(errno)};
    if (fd >= 0) ::close(fd);
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    r.error = ConfigError{path, 0, "not a regular file"};
    return r;
  }
  if (std::string why = config_file_problem(st.st_uid, st.st_mode, ::geteuid()); !why.empty()) {
    ::close(fd);
    r.error = ConfigError{path, 0, why};
    return r;
  }
  // A config is a few kilobytes; a bound keeps a huge file from exhausting the daemon's memory.
  constexpr std::size_t kMaxConfigBytes = 1 << 20;
  auto text = read_descriptor(fd, kMaxConfigBytes);
  const int e = errno;
  ::close(fd);
  if (!text) {
    r.error = ConfigError{path, 0,
                          e == EFBIG ? "larger than " + std::to_string(kMaxConfigBytes) + " bytes"
                                     : std::string("cannot read: ") + std::strerror(e)};
    return r;
  }
  r.text = std::move(*text);
  return r;
}

ConfigResult check_config(const std::string& path, std::vector<std::string> other_tables) {
  ConfigText t = read_config_text(path);
  if (!t.text) {
    ConfigResult r;
    r.errors.push_back(*t.error);
    return r;
  }
  return load_config(*t.text, path, std::move(other_tables));
}

}  // namespace gpreempt::sched
