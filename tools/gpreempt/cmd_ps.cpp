// `gpreempt ps`: GPU processes (who has /dev/kfd open, who KFD lists in sysfs), their queues,
// command lines and containers, and container <-> host pid resolution through NSpid.
#include <unistd.h>

#include <chrono>
#include <deque>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli.h"
#include "common/escape.h"
#include "discovery/json.h"
#include "discovery/process_discovery.h"
#include "discovery/process_watch.h"

namespace gpreempt::cli {

namespace {

struct PsOptions {
  std::optional<std::string> container;
  std::optional<int> host_pid_of;       // a pid as seen inside --container
  std::optional<int> container_pid_of;  // a host pid
  discovery::SystemRoots roots;
};

std::string join(const std::vector<std::string>& v, std::size_t max) {
  const std::string s = gpreempt::printable_command_line(v);
  return s.size() > max ? s.substr(0, max - 3) + "..." : s;
}

void run_ps(const Globals& g, const PsOptions& o) {
  if (o.host_pid_of) {
    auto host = discovery::host_pid_of(o.roots, *o.host_pid_of, o.container.value_or(""));
    if (!host)
      throw Failure("no single process sees itself as pid " + std::to_string(*o.host_pid_of) +
                    (o.container ? " in container " + *o.container : std::string(" in any container")) +
                    " (give --container when several containers have that pid)");
    emit(g, std::to_string(*host) + "\n",
         {{"container_pid", *o.host_pid_of}, {"host_pid", *host}, {"container", o.container.value_or("")}});
    return;
  }
  if (o.container_pid_of) {
    auto inner = discovery::container_pid_of(o.roots, *o.container_pid_of);
    if (!inner) throw Failure("no readable " + o.roots.proc + "/" + std::to_string(*o.container_pid_of) + "/status");
    emit(g, std::to_string(*inner) + "\n", {{"host_pid", *o.container_pid_of}, {"container_pid", *inner}});
    return;
  }
  std::size_t unreadable = 0;
  discovery::kfd_users(o.roots, &unreadable);
  auto procs = discovery::gpu_processes(o.roots, o.container);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : procs) {
    list.push_back(discovery::to_json(p));
    std::size_t compute = 0;
    for (const auto& q : p.queues) compute += q.type == "compute";
    rows.push_back({std::to_string(p.pid), p.container_pid ? std::to_string(*p.container_pid) : "-",
                    p.container_id ? p.container_id->substr(0, 12) : "-", p.has_kfd_open ? "yes" : "no",
                    std::to_string(p.queues.size()) + " (" + std::to_string(compute) + " compute)",
                    join(p.cmdline, 60)});
  }
  nlohmann::ordered_json j = {{"processes", list}, {"unreadable_processes", unreadable}};
  if (g.json) {
    print_json(j);
    return;
  }
  std::ostringstream out;
  out << table({"PID", "CONTAINER_PID", "CONTAINER", "KFD_OPEN", "QUEUES", "COMMAND"}, rows);
  if (unreadable)
    out << unreadable << " process(es) whose open files could not be read (run as root to see all)\n";
  std::cout << out.str();
}

struct WatchOptions {
  double interval = 1.0;
  unsigned count = 0;  // snapshots to take; 0 = until interrupted
  std::optional<std::string> container;
  discovery::SystemRoots roots;
};

std::string event_text(const discovery::WatchEvent& e) {
  std::string s = e.kind + " pid " + std::to_string(e.pid);
  if (e.container_pid) s += " (container pid " + std::to_string(*e.container_pid) + ")";
  if (e.queue_id)
    s += " queue " + std::to_string(*e.queue_id) + " " + e.queue_type + " on gpu " +
         discovery::gpu_id_hex(e.gpu_id.value_or(0));
  else if (!e.cmdline.empty())
    s += ": " + join(e.cmdline, 60);
  return s;
}

// Polls /proc and KFD sysfs. --json: one event per line (JSON Lines) as changes happen; on a
// terminal: a table redrawn every interval with the latest events under it.
void run_watch(const Globals& g, const WatchOptions& o) {
  if (o.interval <= 0) throw UsageError("--interval must be > 0 seconds");
  const bool redraw = !g.json && ::isatty(STDOUT_FILENO);
  std::vector<discovery::ProcessInfo> prev;
  std::deque<std::string> recent;
  for (unsigned n = 0; o.count == 0 || n < o.count; ++n) {
    if (n > 0) std::this_thread::sleep_for(std::chrono::duration<double>(o.interval));
    auto now = discovery::gpu_processes(o.roots, o.container);
    auto events = discovery::diff_processes(prev, now);
    prev = std::move(now);
    if (g.json) {
      for (const auto& e : events) print_json(discovery::to_json(e), -1);
      std::cout.flush();
      continue;
    }
    for (const auto& e : events) {
      recent.push_back(event_text(e));
      if (!redraw) std::cout << recent.back() << "\n";
    }
    while (recent.size() > 10) recent.pop_front();
    if (!redraw) {
      std::cout.flush();
      continue;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& p : prev) {
      std::size_t compute = 0;
      for (const auto& q : p.queues) compute += q.type == "compute";
      rows.push_back({std::to_string(p.pid), p.container_pid ? std::to_string(*p.container_pid) : "-",
                      std::to_string(p.queues.size()) + " (" + std::to_string(compute) + " compute)",
                      join(p.cmdline, 60)});
    }
    std::cout << "\x1b[H\x1b[2J" << "gpreempt watch: " << prev.size() << " GPU process(es), every "
              << o.interval << " s (Ctrl-C to stop)\n\n"
              << table({"PID", "CONTAINER_PID", "QUEUES", "COMMAND"}, rows) << "\nRecent events:\n";
    for (const auto& r : recent) std::cout << "  " << r << "\n";
    std::cout.flush();
  }
}

}  // namespace

// cmd_experiment.cpp: registered with the process commands it builds on.
void register_experiment_commands(CLI::App& app, Globals& globals);

void register_ps_commands(CLI::App& app, Globals& globals) {
  register_experiment_commands(app, globals);
  {
    auto w = std::make_shared<WatchOptions>();
    CLI::App* watch = add_command(
        app, globals, "watch", "Follow GPU processes and their KFD queues as they come and go",
        "Polls /proc (who has /dev/kfd open) and /sys/class/kfd/kfd/proc (queues) every --interval.\n"
        "On a terminal: a table that refreshes. --json: one JSON object per line per event\n"
        "(process_started, process_exited, queue_created, queue_destroyed); the first look reports\n"
        "what already exists as started/created.\n"
        "Examples:\n  gpreempt watch\n  gpreempt watch --json --interval 0.2 | jq -c .\n"
        "Exit codes: 0 ok (after --count looks, or interrupted), 2 usage.");
    watch->add_option("--interval", w->interval, "Seconds between looks")->capture_default_str();
    watch->add_option("--count", w->count, "Stop after this many looks (0 = never)")->capture_default_str();
    watch->add_option("--container", w->container, "Only processes of this container (id prefix)");
    watch->add_option("--proc", w->roots.proc, "procfs root")->capture_default_str();
    watch->add_option("--sysfs", w->roots.kfd_sysfs, "KFD sysfs directory")->capture_default_str();
    watch->callback([&globals, w] { run_watch(globals, *w); });
  }
  auto o = std::make_shared<PsOptions>();
  CLI::App* ps = add_command(
      app, globals, "ps", "GPU processes: pids (host and container), queues, command, container",
      "A GPU process has /dev/kfd open or a /sys/class/kfd/kfd/proc/<pid> directory. Queue ids come\n"
      "from per-process sysfs (no root needed). Logs inside a container print the container pid;\n"
      "KFD and gpreempt use host pids: --host-pid-of / --container-pid-of translate (NSpid).\n"
      "Examples:\n  gpreempt ps\n  gpreempt ps --container 3f2a9c --json\n"
      "  gpreempt ps --container 3f2a9c --host-pid-of 157868\n"
      "Exit codes: 0 ok, 1 pid not found, 2 usage.");
  ps->add_option("--container", o->container, "Only processes of this container (id prefix)");
  ps->add_option("--host-pid-of", o->host_pid_of, "Print the host pid of this in-container pid");
  ps->add_option("--container-pid-of", o->container_pid_of, "Print the in-container pid of this host pid");
  ps->add_option("--proc", o->roots.proc, "procfs root")->capture_default_str();
  ps->add_option("--sysfs", o->roots.kfd_sysfs, "KFD sysfs directory")->capture_default_str();
  ps->callback([&globals, o] { run_ps(globals, *o); });
}

}  // namespace gpreempt::cli
