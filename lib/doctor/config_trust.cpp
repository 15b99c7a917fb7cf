#include "doctor/config_trust.h"

#include <sys/stat.h>

#include <vector>

#include "daemon_config.h"
#include "trust_document.h"

namespace gpreempt::doctor {

namespace {

using Json = nlohmann::ordered_json;

bool loopback(const std::string& address) {
  const auto host = address.substr(0, address.rfind(':'));
  return host == "127.0.0.1" || host == "localhost" || host == "[::1]" || host == "::1" ||
         host.rfind("127.", 0) == 0;
}

std::string text(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// The verdict on one trust document (sched::trust_document), seen at `origin`.
CheckResult review(const Json& doc, const std::string& origin) {
  CheckResult r;
  r.id = "config_trust";
  std::vector<std::string> warn, fix;
  for (const auto& w : doc.value("warnings", Json::array())) {
    warn.push_back(w.get<std::string>());
    fix.push_back(
        "remove single_tenant and match the preempting classes by uid, user, a root-owned "
        "cgroup, container or pod (docs/security.md)");
  }
  const Json roots = doc.value("rootless_roots", Json::object());
  const std::string podman = text(roots, "podman"), containerd = text(roots, "containerd");
  if (!podman.empty() || !containerd.empty()) {
    warn.push_back("rootless container roots are read (podman_rootless_root \"" + podman +
                   "\", containerd_rootless_root \"" + containerd +
                   "\"): a rootless container's name and pod are its user's own words");
    fix.push_back("set them to \"\" unless rules need rootless containers' names");
  }
  const std::string metrics = text(doc, "metrics");
  if (!metrics.empty() && !loopback(metrics)) {
    warn.push_back("metrics listen on " + metrics +
                   ", beyond loopback: anyone who reaches it sees every class's activity");
    fix.push_back(
        "bind to 127.0.0.1, or guard the port (a NetworkPolicy: "
        "deploy/kubernetes/networkpolicy.yaml; a firewall; IPAddressAllow=)");
  }
  std::string trusted = "classes";
  bool first = true;
  for (const auto& cls : doc.value("classes", Json::array())) {
    trusted += std::string(first ? " " : ", ") + text(cls, "name") + "=" +
               std::to_string(cls.value("priority", 0)) + " (";
    first = false;
    bool first_match = true;
    for (const auto& m : cls.value("match", Json::array())) {
      trusted += (first_match ? "" : " | ") + m.get<std::string>();
      first_match = false;
    }
    trusted += ")";
  }
  const std::string group = text(doc, "control_group");
  trusted += "; control: root" +
             (group.empty() ? std::string(" only")
                            : " and group '" + group + "' (may suspend every class)");
  trusted += "; metrics " + (metrics.empty() ? std::string("off") : metrics);
  trusted += "; single_tenant " + std::string(doc.value("single_tenant", false) ? "true" : "false");
  r.status = warn.empty() ? Status::kPass : Status::kWarn;
  r.summary = origin + ": " + trusted;
  for (const auto& w : warn) r.summary += "; WARNING: " + w;
  for (const auto& f : fix) r.fix += (r.fix.empty() ? "" : "; ") + f;
  return r;
}

// The file's trust document, or the check's verdict when there is none to review.
std::optional<Json> file_document(const std::string& path, CheckResult& verdict) {
  verdict.id = "config_trust";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    verdict.status = Status::kSkip;
    verdict.summary =
        "no config at " + path + ": gpreemptd runs the built-in classes (online only for its own user)";
    return std::nullopt;
  }
  const auto loaded = gpreemptd::check_daemon_config(path);
  if (!loaded.config) {
    verdict.status = Status::kFail;
    verdict.summary = path + ": gpreemptd would refuse it: " + loaded.errors.front().to_string();
    verdict.fix = "gpreemptd --check-config " + path + " lists every error with what to write instead";
    return std::nullopt;
  }
  return gpreemptd::trust_document(*loaded.config);
}

void prefix(CheckResult& r, const std::string& why) { r.summary = why + "; " + r.summary; }

}  // namespace

CheckResult check_config_trust(const std::string& path, const RunningDaemon* running) {
  const Json* status = running && running->status ? &*running->status : nullptr;
  const Json daemon = status ? status->value("daemon", Json::object()) : Json::object();
  if (status && daemon.contains("trust")) {
    // What is in force, then whether the file on disk still says the same.
    const std::string loaded = text(daemon, "config_path");
    CheckResult r = review(daemon["trust"], "running gpreemptd (pid " +
                                                std::to_string(daemon.value("pid", 0)) + ", " +
                                                (loaded.empty() ? "built-in config" : loaded) + ")");
    if (!loaded.empty()) {
      CheckResult file_verdict;
      const auto on_disk = file_document(loaded, file_verdict);
      if (!on_disk || *on_disk != daemon["trust"]) {
        r.status = Status::kWarn;
        r.summary += "; WARNING: " + loaded + " has changed since gpreemptd loaded it (" +
                     (on_disk ? "it would trust otherwise" : file_verdict.summary) +
                     "): a reload or restart changes what is trusted";
        r.fix += std::string(r.fix.empty() ? "" : "; ") + "gpreempt doctor --socket '' " +
                 "--config " + loaded + " reviews the file; reload (systemctl reload gpreemptd) " +
                 "once it is right";
      }
    }
    return r;
  }
  CheckResult r;
  const auto doc = file_document(path, r);
  if (doc) r = review(*doc, path);
  if (!running) return r;
  if (status)
    prefix(r, "gpreemptd at " + running->socket +
                  " shows what it trusts only to root and its control_group; this is the file");
  else
    prefix(r, "no gpreemptd answers at " + running->socket + " (" + running->error +
                  "); this is the file it would load");
  return r;
}

}  // namespace gpreempt::doctor
