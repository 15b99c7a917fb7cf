#include "daemon_config.h"

#include <algorithm>

#include "sched/toml_fields.h"

namespace gpreemptd {

namespace sched = gpreempt::sched;
using namespace std::chrono_literals;
using sched::Duration;
using sched::line_of;

namespace {

// The specifiers systemd gives these letters in unit files (systemd.unit(5)), which is where an
// operator has met them: %h home, %u user name, %U uid.
std::optional<std::string> expand_specifiers(std::string_view tmpl, std::uint32_t uid,
                                             const std::string& user, const std::string& home,
                                             std::string* why) {
  std::string out;
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] != '%') {
      out += tmpl[i];
      continue;
    }
    const char c = i + 1 < tmpl.size() ? tmpl[++i] : '\0';
    if (c == '%') {
      out += '%';
    } else if (c == 'U') {
      out += std::to_string(uid);
    } else if (c == 'u' || c == 'h') {
      const std::string& value = c == 'u' ? user : home;
      if (value.empty()) return std::nullopt;
      out += value;
    } else {
      if (why)
        *why = c ? "has an unknown specifier '%" + std::string(1, c) +
                       "' (known: %h home, %u user name, %U uid, %% a '%')"
                 : "ends with a lone '%' (write %% for a '%')";
      return std::nullopt;
    }
  }
  return out;
}
}  // namespace

std::string check_user_root(std::string_view tmpl) {
  std::string why;
  auto expanded = expand_specifiers(tmpl, 0, "user", "/home/user", &why);
  if (!expanded) return why;
  if (expanded->empty() || (*expanded)[0] != '/')
    return "must be an absolute path once expanded (start with '/' or %h) or \"\" (not looked "
           "at), not \"" +
           std::string(tmpl) + "\"";
  return "";
}

std::optional<std::string> expand_user_root(std::string_view tmpl, std::uint32_t uid,
                                            const std::string& user, const std::string& home) {
  return expand_specifiers(tmpl, uid, user, home, nullptr);
}

namespace {

// [daemon], read through the same typed fields as the scheduler's sections.
class DaemonSection : public sched::TomlFields {
 public:
  using TomlFields::TomlFields;

  void read(const toml::table& t, DaemonSettings& d) {
    for (auto&& [k, v] : t) {
      if (k == "socket") {
        if (auto s = string(k, v)) {
          if ((*s)[0] != '/')
            error(line_of(k), "'socket' must be an absolute path, not \"" + *s + "\"");
          else
            d.socket_path = *s;
        }
      } else if (k == "metrics") {
        if (auto s = string(k, v, true)) {
          if (!s->empty() && !valid_address(*s))
            error(
                line_of(k),
                "'metrics' must be HOST:PORT (port 0-65535, 0: any free port) or \"\" to disable, "
                "not \"" +
                    *s + "\"");
          else
            d.metrics_address = *s;
        }
      } else if (k == "docker_root" || k == "containerd_root" || k == "crio_root" ||
                 k == "podman_root") {
        if (auto s = string(k, v, true)) {
          if (!s->empty() && (*s)[0] != '/')
            error(line_of(k), "'" + std::string(k.str()) +
                                  "' must be an absolute path or \"\" (not looked at), not \"" +
                                  *s + "\"");
          else
            (k == "docker_root"       ? d.containers.docker
             : k == "containerd_root" ? d.containers.containerd
             : k == "crio_root"       ? d.containers.crio
                                      : d.containers.podman) = *s;
        }
      } else if (k == "podman_rootless_root" || k == "containerd_rootless_root") {
        if (auto s = string(k, v, true)) {
          if (std::string why = s->empty() ? "" : check_user_root(*s); !why.empty())
            error(line_of(k), "'" + std::string(k.str()) + "' " + why);
          else
            (k == "podman_rootless_root" ? d.containers.podman_rootless
                                         : d.containers.containerd_rootless) = *s;
        }
      } else if (k == "control_group") {
        if (auto s = string(k, v)) d.control_group = *s;
      } else if (k == "max_connections_per_uid" || k == "hint_rate" || k == "hint_burst") {
        if (auto x = integer(k, v)) {
          if (*x < 1 || *x > 1000000)
            error(line_of(k), "'" + std::string(k.str()) + "' must be between 1 and 1000000, not " +
                                  std::to_string(*x));
          else
            (k == "max_connections_per_uid" ? d.max_connections_per_uid
             : k == "hint_rate"             ? d.hint_rate
                                            : d.hint_burst) = static_cast<uint32_t>(*x);
        }
      } else if (k == "idle_timeout_ms") {
        if (auto x = duration(k, v, 1ms)) {
          if (*x <= Duration::zero())
            error(line_of(k), "idle_timeout_ms must be greater than 0");
          else
            d.idle_timeout = *x;
        }
      } else if (k == "poll_interval_us") {
        if (auto x = duration(k, v, 1us)) {
          if (*x < DaemonSettings::kMinPollInterval || *x > DaemonSettings::kMaxPollInterval)
            error(line_of(k), "poll_interval_us must be between 100 and 500");
          else
            d.poll_interval = *x;
        }
      } else if (k == "realtime_priority") {
        if (auto x = integer(k, v)) {
          if (*x < 0 || *x > DaemonSettings::kMaxRealtimePriority)
            error(line_of(k), "realtime_priority must be between 0 (off) and " +
                                  std::to_string(DaemonSettings::kMaxRealtimePriority) +
                                  " (a SCHED_FIFO priority), not " + std::to_string(*x));
          else
            d.realtime_priority = static_cast<int>(*x);
        }
      } else {
        error(line_of(k), "unknown key '" + std::string(k.str()) + "' in [daemon]");
      }
    }
  }

  static bool valid_address(const std::string& s) {
    auto colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()) return false;
    std::string port = s.substr(colon + 1);
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return false;
    int p = std::stoi(port);
    return p >= 0 && p <= 65535;
  }

};

}  // namespace

DaemonConfig builtin_daemon_config(std::uint32_t trusted_uid) {
  DaemonConfig c;
  static_cast<sched::Config&>(c) = sched::builtin_config(trusted_uid);
  return c;
}

DaemonConfig builtin_daemon_config() {
  DaemonConfig c;
  static_cast<sched::Config&>(c) = sched::builtin_config();
  return c;
}

DaemonConfigResult load_daemon_config(std::string_view text, const std::string& file_name) {
  DaemonConfigResult out;
  auto scheduling = sched::load_config(text, file_name, {"daemon"});
  out.errors = std::move(scheduling.errors);
  out.warnings = std::move(scheduling.warnings);
  DaemonSettings settings;
  toml::table root;
  bool parsed = false;
  try {
    root = toml::parse(text, file_name);
    parsed = true;
  } catch (const toml::parse_error&) {
    // load_config reported it, at its line.
  }
  if (parsed) {
    DaemonSection section(file_name);
    for (auto&& [k, v] : root) {
      if (k != "daemon") continue;
      if (const toml::table* t = v.as_table()) {
        section.read(*t, settings);
      } else {
        section.errors().push_back({file_name, line_of(k),
                                    "'daemon' must be a table, not " + std::string(sched::type_name(v))});
      }
    }
    for (auto& e : section.errors()) out.errors.push_back(std::move(e));
  }
  std::stable_sort(out.errors.begin(), out.errors.end(),
                   [](const sched::ConfigError& a, const sched::ConfigError& b) { return a.line < b.line; });
  if (out.errors.empty() && scheduling.config) {
    DaemonConfig c;
    static_cast<sched::Config&>(c) = std::move(*scheduling.config);
    c.daemon = std::move(settings);
    out.config = std::move(c);
  }
  return out;
}

DaemonConfigResult check_daemon_config(const std::string& path) {
  sched::ConfigText t = sched::read_config_text(path);
  if (!t.text) {
    DaemonConfigResult r;
    r.errors.push_back(*t.error);
    return r;
  }
  return load_daemon_config(*t.text, path);
}

}  // namespace gpreemptd
