#include "doctor/config_trust.h"

#include <sys/stat.h>

#include <vector>

#include "sched/config.h"

namespace gpreempt::doctor {

namespace {

bool loopback(const std::string& address) {
  const auto host = address.substr(0, address.rfind(':'));
  return host == "127.0.0.1" || host == "localhost" || host == "[::1]" || host == "::1" ||
         host.rfind("127.", 0) == 0;
}

}  // namespace

CheckResult check_config_trust(const std::string& path) {
  CheckResult r;
  r.id = "config_trust";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    r.status = Status::kSkip;
    r.summary = "no config at " + path +
                ": gpreemptd runs the built-in classes (online only for its own user)";
    return r;
  }
  const auto loaded = sched::check_config(path);
  if (!loaded.config) {
    r.status = Status::kFail;
    r.summary = path + ": gpreemptd would refuse it: " + loaded.errors.front().to_string();
    r.fix = "gpreemptd --check-config " + path + " lists every error with what to write instead";
    return r;
  }
  const sched::Config& c = *loaded.config;
  std::vector<std::string> warn, fix;
  for (const auto& w : loaded.warnings) {
    warn.push_back(w.to_string());
    fix.push_back(
        "remove single_tenant and match the preempting classes by uid, user, a root-owned "
        "cgroup, container or pod (docs/security.md)");
  }
  const auto& roots = c.daemon.containers;
  if (!roots.podman_rootless.empty() || !roots.containerd_rootless.empty()) {
    warn.push_back("rootless container roots are read (podman_rootless_root \"" +
                   roots.podman_rootless + "\", containerd_rootless_root \"" +
                   roots.containerd_rootless +
                   "\"): a rootless container's name and pod are its user's own words");
    fix.push_back("set them to \"\" unless rules need rootless containers' names");
  }
  if (!c.daemon.metrics_address.empty() && !loopback(c.daemon.metrics_address)) {
    warn.push_back("metrics listen on " + c.daemon.metrics_address +
                   ", beyond loopback: anyone who reaches it sees every class's activity");
    fix.push_back(
        "bind to 127.0.0.1, or guard the port (a NetworkPolicy: "
        "deploy/kubernetes/networkpolicy.yaml; a firewall; IPAddressAllow=)");
  }
  std::string trusted = "classes";
  for (const auto& cls : c.classes) {
    trusted += std::string(&cls == &c.classes.front() ? " " : ", ") + cls.cls.name + "=" +
               std::to_string(cls.cls.priority) + " (";
    for (const auto& m : cls.match)
      trusted += (&m == &cls.match.front() ? "" : " | ") + m.describe();
    trusted += ")";
  }
  trusted += "; control: root" +
             (c.daemon.control_group.empty()
                  ? std::string(" only")
                  : " and group '" + c.daemon.control_group + "' (may suspend every class)");
  trusted += "; metrics " +
             (c.daemon.metrics_address.empty() ? std::string("off") : c.daemon.metrics_address);
  trusted += "; single_tenant " + std::string(c.single_tenant ? "true" : "false");
  r.status = warn.empty() ? Status::kPass : Status::kWarn;
  r.summary = path + ": " + trusted;
  for (const auto& w : warn) r.summary += "; WARNING: " + w;
  for (const auto& f : fix) r.fix += (r.fix.empty() ? "" : "; ") + f;
  return r;
}

}  // namespace gpreempt::doctor
