// `gpreempt queues --pid P`: the target's KFD queues, from a debug-session snapshot (ring and
// pointer addresses, exception status) or, with --sysfs, from per-process sysfs (no ptrace).
#include <sstream>

#include "cli.h"
#include "discovery/proc_parse.h"
#include "discovery/process_discovery.h"
#include "session_options.h"
#include "target_check.h"

namespace gpreempt::cli {

namespace {

struct QueuesOptions {
  SessionOptions session;
  bool sysfs = false;
};

void run_sysfs(const Globals& g, int pid) {
  auto queues = discovery::read_process_queues(pid);
  nlohmann::json j{{"pid", pid}, {"source", "sysfs"}, {"queues", nlohmann::json::array()}};
  std::vector<std::vector<std::string>> rows;
  for (const auto& q : queues) {
    j["queues"].push_back({{"queue_id", q.queue_id},
                           {"gpu_id", q.gpu_id},
                           {"type", discovery::sysfs_queue_type_name(q.type)},
                           {"ring_size_bytes", q.size}});
    rows.push_back({std::to_string(q.queue_id), gpu_id_text(q.gpu_id),
                    discovery::sysfs_queue_type_name(q.type), std::to_string(q.size)});
  }
  std::ostringstream out;
  out << "process " << pid << ": " << queues.size() << " queue(s) (per-process sysfs)\n";
  if (!rows.empty()) out << table({"QUEUE", "GPU_ID", "TYPE", "RING_BYTES"}, rows);
  emit(g, out.str(), j);
}

void run_snapshot(const Globals& g, const SessionOptions& s) {
  auto ctx = open_context(s);  // the KFD version gate speaks first
  require_gpu_queues(s.pid);
  ctx->attach(s.pid);
  auto queues = ctx->queues(s.pid);
  ctx->detach(s.pid);
  if (queues.empty()) throw no_queues_failure(s.pid);
  nlohmann::json j{{"pid", s.pid}, {"source", "snapshot"}, {"queues", nlohmann::json::array()}};
  std::vector<std::vector<std::string>> rows;
  for (const auto& q : queues) {
    j["queues"].push_back(queue_json(q.info, q.suspended));
    rows.push_back({std::to_string(q.info.queue_id), gpu_id_text(q.info.gpu_id),
                    queue_type_name(q.info.queue_type), hex(q.info.ring_base_address),
                    std::to_string(q.info.ring_size), hex(q.info.read_pointer_address),
                    hex(q.info.write_pointer_address), hex(q.info.exception_status)});
  }
  std::string notes;
  j["notices"] = notices_json(*ctx, &notes);
  std::ostringstream out;
  out << "process " << s.pid << ": " << queues.size() << " queue(s) (KFD queue snapshot, newest first)\n";
  if (!rows.empty())
    out << table({"QUEUE", "GPU_ID", "TYPE", "RING_BASE", "RING_BYTES", "RPTR_ADDR", "WPTR_ADDR",
                  "EXCEPTIONS"},
                 rows);
  out << notes;
  emit(g, out.str(), j);
}

}  // namespace

void register_queues_commands(CLI::App& app, Globals& globals) {
  auto o = std::make_shared<QueuesOptions>();
  CLI::App* cmd = add_command(
      app, globals, "queues", "List the KFD queues of a process",
      "By default gpreempt attaches (ptrace + KFD debug session), takes a queue snapshot and\n"
      "detaches: you get ring base, read/write pointer addresses (join keys with debugfs MQDs and\n"
      "HIP logs) and exception bits. This needs permission to ptrace the process. Taking the\n"
      "snapshot clears the queues' 'new' bit, which is what makes them suspendable.\n"
      "--sysfs reads /sys/class/kfd/kfd/proc/<pid>/queues instead: no ptrace, no root, but only\n"
      "id, GPU, type and ring size.\n"
      "Examples:\n  gpreempt queues --pid 1234\n  gpreempt queues --pid 1234 --sysfs --json\n"
      "A process without queues (the launcher shell, the parent of a PyTorch worker, a runtime\n"
      "that has not used the GPU yet) is an error that lists the processes with /dev/kfd open.\n"
      "Exit codes: 0 ok, 1 the process has no queues or cannot be attached/read, 2 usage.");
  add_session_options(cmd, o->session);
  cmd->add_flag("--sysfs", o->sysfs, "Read per-process sysfs instead of attaching");
  cmd->callback([&globals, o] {
    if (o->sysfs) {
      require_gpu_queues(o->session.pid);
      run_sysfs(globals, o->session.pid);
    } else {
      run_snapshot(globals, o->session);
    }
  });
}

}  // namespace gpreempt::cli
