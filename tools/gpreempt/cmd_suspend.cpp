// `gpreempt suspend` and `gpreempt resume`: preempt a process's queues by hand.
#include <signal.h>
#include <string.h>

#include <chrono>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "cli_common.h"
#include "common/error.h"
#include "kfd/grace.h"
#include "session_options.h"
#include "target_check.h"

namespace gpreempt::cli {

namespace {

struct SuspendOptions {
  SessionOptions session;
  std::vector<std::string> queues;
  GraceOptions grace;
  int64_t for_ms = -1;
};

struct ResumeOptions {
  SessionOptions session;
  std::vector<std::string> queues;
};

std::optional<std::vector<uint32_t>> requested_ids(const std::vector<std::string>& items) {
  if (items.empty()) return std::nullopt;
  return parse_queue_ids(items);
}

void run_suspend(const Globals& g, const SuspendOptions& o) {
  block_termination_signals();  // before the control thread exists, so it inherits the mask
  auto ids = requested_ids(o.queues);
  const int pid = o.session.pid;
  auto ctx = open_context(o.session);  // the KFD version gate speaks first
  require_gpu_queues(pid);
  ctx->attach(pid);

  const auto current = ctx->queues(pid);
  if (current.empty()) throw no_queues_failure(pid);
  std::vector<kfd::QueueInfo> relevant;
  for (const auto& q : current)
    if (!ids || std::find(ids->begin(), ids->end(), q.info.queue_id) != ids->end())
      relevant.push_back(q.info);
  uint32_t clock_mhz = 0;
  const uint32_t grace = resolve_grace(o.grace, relevant, &clock_mhz);

  auto suspended = ctx->suspend(pid, ids, grace);
  std::vector<uint32_t> held;
  for (const auto& q : suspended.result.queues)
    if (q.outcome == kfd::QueueOutcome::kDone) held.push_back(q.queue_id);

  nlohmann::json j{{"pid", pid}, {"suspend", batch_json(suspended)}};
  j["watchdog_ms"] = ctx->watchdog_bound().count();
  j["grace_units"] = grace;
  j["grace_default"] = grace == kfd::KFD_USE_DEFAULT_GRACE_PERIOD;
  j["clock_mhz"] = clock_mhz ? nlohmann::json(clock_mhz) : nlohmann::json(nullptr);
  j["grace_us"] = clock_mhz ? nlohmann::json(json_conventions::round_us(kfd::grace_units_to_us(grace, clock_mhz)))
                            : nlohmann::json(nullptr);
  std::ostringstream out;
  out << "suspended " << suspended.result.count << " of " << suspended.result.queues.size()
      << " queue(s) of process " << pid << " in " << suspended.timing.total_ns / 1000.0
      << " us (ioctl " << suspended.timing.ioctl_ns / 1000.0 << " us, control-thread hop "
      << suspended.timing.hop_ns / 1000.0 << " us)\n";
  if (!suspended.result.queues.empty()) out << batch_table(suspended.result);
  if (!g.json) {
    std::cout << out.str();
    out.str("");
  }

  std::string reason;
  const auto t0 = std::chrono::steady_clock::now();
  if (!held.empty()) {
    if (!g.json) {
      if (o.for_ms >= 0)
        std::cout << "holding for " << o.for_ms << " ms (Ctrl-C resumes now)\n";
      else if (o.session.watchdog_ms == 0)
        std::cout << "holding until Ctrl-C (no watchdog)\n";
      else
        std::cout << "holding until Ctrl-C (or the " << o.session.watchdog_ms
                  << " ms watchdog)\n";
      std::cout.flush();
    }
    const auto deadline = t0 + std::chrono::milliseconds(o.for_ms < 0 ? 0 : o.for_ms);
    for (;;) {
      int64_t slice = 100;
      if (o.for_ms >= 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
        if (left <= 0) {
          reason = "--for elapsed";
          break;
        }
        slice = std::min<int64_t>(slice, left);
      }
      if (int sig = wait_for_signal_or(slice)) {
        reason = std::string("signal ") + sigabbrev_np(sig);
        break;
      }
      if (!ctx->attached(pid)) {
        reason = "target exited";
        break;
      }
      if (ctx->stats().watchdog_resumes > 0) {
        reason = "watchdog";
        break;
      }
    }
  }
  const double held_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  bool ok = suspended.result.all_done();
  std::string failure;
  if (!ok) failure = "not every requested queue was suspended (see the table)";
  if (!held.empty()) {
    j["held_ms"] = json_conventions::round_ms(held_ms);
    j["ended_by"] = reason;
    if (reason == "target exited") {
      ok = false;
      failure = "process " + std::to_string(pid) + " exited while suspended";
    } else if (reason != "watchdog") {
      auto resumed = ctx->resume(pid, held);
      j["resume"] = batch_json(resumed);
      out << "resumed " << resumed.result.count << " queue(s) after " << held_ms << " ms ("
          << reason << ") in " << resumed.timing.total_ns / 1000.0 << " us\n";
    } else {
      out << "the watchdog resumed the queues after " << held_ms << " ms\n";
    }
  }
  if (ctx->attached(pid)) ctx->detach(pid);
  std::string notes;
  j["notices"] = notices_json(*ctx, &notes);
  out << notes;
  j["ok"] = ok;
  if (!ok) j["error"] = json_conventions::error_object("failed", std::nullopt, failure);
  emit(g, out.str(), j);
  if (!ok) {
    exit_partial("suspend: " + failure);
  }
}

void run_resume(const Globals& g, const ResumeOptions& o) {
  auto ids = requested_ids(o.queues);
  const int pid = o.session.pid;
  auto ctx = open_context(o.session);
  require_gpu_queues(pid);
  ctx->attach(pid);
  auto resumed = ctx->resume(pid, ids);
  ctx->detach(pid);
  nlohmann::json j{{"pid", pid}, {"resume", batch_json(resumed)}};
  std::ostringstream out;
  out << "resumed " << resumed.result.count << " of " << resumed.result.queues.size()
      << " queue(s) of process " << pid << " in " << resumed.timing.total_ns / 1000.0 << " us\n";
  if (!resumed.result.all_done()) out << batch_table(resumed.result);
  std::string notes;
  j["notices"] = notices_json(*ctx, &notes);
  out << notes;
  j["ok"] = resumed.result.all_done();
  if (!resumed.result.all_done())
    j["error"] = json_conventions::error_object("failed", std::nullopt, "some queues do not exist (see the table)");
  emit(g, out.str(), j);
  if (!resumed.result.all_done()) {
    exit_partial("resume: some queues do not exist (see the table)");
  }
}

}  // namespace

void register_suspend_commands(CLI::App& app, Globals& globals) {
  auto s = std::make_shared<SuspendOptions>();
  CLI::App* sus = add_command(
      app, globals, "suspend", "Suspend a process's GPU queues (all, or --queues), then resume",
      "Attaches to the process (ptrace + KFD debug session), refreshes its queue snapshot (new\n"
      "queues are not suspendable before that), suspends the queues with one SUSPEND_QUEUES call,\n"
      "holds them for --for milliseconds or until Ctrl-C, resumes them and detaches. The queues are\n"
      "never left suspended: Ctrl-C/SIGTERM/SIGHUP resume them, the watchdog resumes them after\n"
      "--watchdog-ms, and if gpreempt dies the kernel resumes them itself.\n"
      "On HWS GPUs (MI100/MI200/MI300) every suspend and resume preempts the whole device's\n"
      "runlist once, other processes' queues included.\n"
      "Grace: --grace N is in the kernel's unit, 1,000 GPU clocks (100 = 100,000 clocks, about\n"
      "48 us at 2100 MHz); --grace-us U converts microseconds at the GPU's max compute clock.\n"
      "Examples:\n  gpreempt suspend --pid 1234 --for 500\n"
      "  gpreempt suspend --pid 1234 --queues 2,3 --grace-us 100 --for 2000 --json\n"
      "--pid must name the process that owns the queues: a launcher shell or the parent of a\n"
      "PyTorch worker has none, and the error lists the processes with /dev/kfd open.\n"
      "Exit codes: 0 every requested queue was suspended and resumed, 1 the process has no GPU\n"
      "queues, a queue could not be suspended or the process exited while suspended, 2 usage.");
  add_session_options(sus, s->session);
  sus->add_option("--queues,-q", s->queues, "Queue ids, e.g. 2,3 (default: all queues)")
      ->delimiter(',');
  add_grace_options(sus, s->grace);
  sus->add_option("--for", s->for_ms,
                  "Hold the queues suspended this many milliseconds (default: until Ctrl-C)")
      ->check(cli_common::at_least<int64_t>(0));
  sus->callback([&globals, s] { run_suspend(globals, *s); });

  auto r = std::make_shared<ResumeOptions>();
  CLI::App* res = add_command(
      app, globals, "resume", "Resume a process's GPU queues (all, or --queues)",
      "Attaches, resumes the queues (RESUME_QUEUES on a fresh snapshot), and detaches — detaching\n"
      "DISABLEs the debug session, which resumes any queue the kernel still holds suspended for\n"
      "this process. Fails with 'another debugger' if a live gpreempt or rocgdb holds the process's\n"
      "session: stop that one (its exit resumes everything).\n"
      "Examples:\n  gpreempt resume --pid 1234\n  gpreempt resume --pid 1234 --queues 3 --json\n"
      "Exit codes: 0 ok, 1 failure (the process has no GPU queues, or a listed queue does not\n"
      "exist), 2 usage.");
  add_session_options(res, r->session);
  res->add_option("--queues,-q", r->queues, "Queue ids (default: all queues)")->delimiter(',');
  res->callback([&globals, r] { run_resume(globals, *r); });
}

}  // namespace gpreempt::cli
