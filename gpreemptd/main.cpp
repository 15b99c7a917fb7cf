// gpreemptd: the gpreempt scheduler daemon (docs/gpreemptd.md).
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "cli_common.h"
#include "daemon.h"
#include "daemon_config.h"
#include "service_notify.h"

namespace {

constexpr int kOk = 0, kFailed = 1, kUsage = 2;

int check_config_file(const std::string& path) {
  auto r = gpreemptd::check_daemon_config(path);
  if (!r.config) {
    for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.to_string().c_str());
    std::fprintf(stderr, "%s: %zu error%s\n", path.c_str(), r.errors.size(),
                 r.errors.size() == 1 ? "" : "s");
    return kFailed;
  }
  for (const auto& w : r.warnings) std::fprintf(stderr, "warning: %s\n", w.to_string().c_str());
  std::printf("%s: ok (%zu classes", path.c_str(), r.config->classes.size());
  for (const auto& c : r.config->classes)
    std::printf("%s %s=%d", &c == &r.config->classes.front() ? ":" : ",", c.cls.name.c_str(),
                c.cls.priority);
  std::printf(")\n");
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "gpreemptd: the gpreempt scheduler daemon. It finds the GPU processes of this machine, puts "
      "each in a class from the config file (or from GPREEMPT_CLASS=online/offline in its "
      "environment when there is no config file; online only for the daemon's own user), and on "
      "each GPU suspends the queues of lower-priority "
      "classes "
      "while higher-priority work is pending (hints over its socket, or the transparent trigger), "
      "through KFD's debug-trap SUSPEND/RESUME_QUEUES. It resumes everything on SIGTERM/SIGINT; if "
      "it is killed, the kernel resumes its targets. SIGHUP re-reads the config file (an invalid "
      "one "
      "is rejected and the running one kept).\n\n"
      "  gpreemptd --config /etc/gpreempt/gpreemptd.toml        run (systemd: Type=notify)\n"
      "  gpreemptd --check-config /etc/gpreempt/gpreemptd.toml  validate a config, print file:line "
      "errors\n"
      "  GPREEMPT_CLASS=online ./serve &  gpreemptd              no config file: the built-in "
      "classes"};
  app.footer(
      "Minimal config:\n"
      "  [[class]]\n  name = \"online\"\n  priority = 10\n"
      "  match = { user = \"vllm\", cmdline = \"*serve*\" }\n"
      "  trigger = \"transparent\"\n\n  [[class]]\n  name = \"offline\"\n  priority = 0\n"
      "  match = { env = \"GPREEMPT_CLASS=offline\" }\n\n"
      "To measure first and preempt later, [policy] name = \"none\" classifies, counts and reports "
      "but suspends nothing; name = \"gpreempt\" (the default) preempts.\n"
      "SIGHUP re-reads the config: classes, policy and every [daemon] key (socket and metrics are "
      "rebound; an address that does not bind keeps the running one, and the log says why).\n"
      "Every key: docs/scheduler.md; the daemon: docs/gpreemptd.md. Status: gpreempt ctl status.\n"
      "Exit codes: 0 ok (stopped by SIGTERM/SIGINT, or --check-config found no error), 1 failure "
      "(invalid config, socket in use, ...), 2 usage.");
  gpreempt::cli_common::add_version_flag(app, "gpreemptd");
  std::string config_path, socket_path, check_path, log_level = "info";
  std::string metrics_address;
  bool foreground = false;
  app.add_option("--config,-c", config_path,
                 "the config file (TOML); without it the built-in classes")
      ->check(CLI::ExistingFile);
  app.add_option("--socket", socket_path,
                 "the control and hint socket (default: the config's [daemon] socket, "
                 "/run/gpreempt/gpreemptd.sock); its directory is created. Given here, a reload "
                 "(SIGHUP) keeps it; from the config, a reload moves it");
  auto* metrics_option =
      app.add_option("--metrics", metrics_address,
                     "the Prometheus endpoint HOST:PORT (default: the config's [daemon] metrics, "
                     "127.0.0.1:9464; '' turns "
                     "it off; port 0 lets the kernel choose, the log and the status say which). "
                     "Given here, a reload keeps it; from the config, a reload moves it");
  app.add_option(
      "--check-config", check_path,
      "check FILE and exit: every error as file:line: message (exit 1), or a summary (exit 0)");
  app.add_flag(
      "--foreground,-f", foreground,
      "stay in the foreground (the only mode: systemd, containers and shells supervise gpreemptd; "
      "accepted for familiarity)");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kOk : kUsage;
  }
  if (!check_path.empty()) return check_config_file(check_path);

  auto logger = spdlog::stderr_logger_mt("gpreemptd");
  spdlog::set_default_logger(logger);
  // journald stamps every line itself; a terminal or a file wants the time.
  spdlog::set_pattern(std::getenv("JOURNAL_STREAM") ? "[%l] %v" : "%Y-%m-%d %H:%M:%S.%e [%l] %v");
  spdlog::set_level(spdlog::level::from_str(log_level));
  spdlog::flush_on(spdlog::level::trace);

  gpreemptd::DaemonConfig config = gpreemptd::builtin_daemon_config();
  if (!config_path.empty()) {
    auto r = gpreemptd::check_daemon_config(config_path);
    if (!r.config) {
      for (const auto& e : r.errors) spdlog::error("{}", e.to_string());
      spdlog::error("{}: invalid config, not starting", config_path);
      return kFailed;
    }
    for (const auto& w : r.warnings) spdlog::warn("{}", w.to_string());
    config = std::move(*r.config);
  }
  gpreemptd::DaemonOptions options;
  options.config_path = config_path;
  if (!socket_path.empty()) options.socket_path = socket_path;
  if (metrics_option->count()) options.metrics_address = metrics_address;
  options.on_ready = [] { gpreemptd::notify_ready("running"); };
  try {
    gpreemptd::Daemon daemon(std::move(options), std::move(config));
    return daemon.run();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return kFailed;
  }
}
