// `gpreempt ps`: GPU processes (who has /dev/kfd open, who KFD lists in sysfs), their queues,
// command lines and containers, and container <-> host pid resolution through NSpid.
#include <iostream>
#include <sstream>

#include "cli.h"
#include "discovery/json.h"
#include "discovery/process_discovery.h"

namespace gpreempt::cli {

namespace {

struct PsOptions {
  std::optional<std::string> container;
  std::optional<int> host_pid_of;       // a pid as seen inside --container
  std::optional<int> container_pid_of;  // a host pid
  discovery::SystemRoots roots;
};

std::string join(const std::vector<std::string>& v, std::size_t max) {
  std::string s;
  for (const auto& a : v) s += (s.empty() ? "" : " ") + a;
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
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::ostringstream out;
  out << table({"PID", "CONTAINER_PID", "CONTAINER", "KFD_OPEN", "QUEUES", "COMMAND"}, rows);
  if (unreadable)
    out << unreadable << " process(es) whose open files could not be read (run as root to see all)\n";
  std::cout << out.str();
}

}  // namespace

void register_ps_commands(CLI::App& app, Globals& globals) {
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
