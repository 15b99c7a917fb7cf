// Options and helpers shared by the commands that attach to a target process: the context
// (device, watchdog), the queue-id list, and the grace period in kernel units or microseconds.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.h"
#include "kfd/session.h"
#include "preempt/context.h"

namespace gpreempt::cli {

struct SessionOptions {
  int pid = 0;
  std::string device = "/dev/kfd";
  uint32_t watchdog_ms = static_cast<uint32_t>(preempt::kDefaultWatchdogBound.count());
};

// --pid (required), --device, --watchdog-ms.
void add_session_options(CLI::App* cmd, SessionOptions& o);

// A context whose signal handling the command does itself (sigwait), so that Ctrl-C resumes and
// detaches cleanly and the command still exits with its own code.
std::unique_ptr<preempt::Context> open_context(const SessionOptions& o);

// Blocks SIGINT/SIGTERM/SIGHUP in the calling thread (before any thread exists, so every thread
// inherits it); wait_for_signal_or(ms) then returns the signal number, or 0 on timeout.
void block_termination_signals();
int wait_for_signal_or(int64_t timeout_ms);  // timeout_ms < 0: wait forever

struct GraceOptions {
  std::optional<uint32_t> units;
  std::optional<uint64_t> us;
};
// --grace N | --grace-us U (mutually exclusive).
void add_grace_options(CLI::App* cmd, GraceOptions& g);
// Kernel units for the queues about to be suspended: --grace as given; --grace-us converted at
// the highest max_engine_clk_fcompute among their GPUs (so every GPU gets at least U µs);
// neither: the driver default. `clock_mhz_out` receives the clock used (0 if none).
uint32_t resolve_grace(const GraceOptions& g, const std::vector<kfd::QueueInfo>& queues,
                       uint32_t* clock_mhz_out);

// "3,5,7" / "3 5 7" → ids. UsageError on anything else.
std::vector<uint32_t> parse_queue_ids(const std::vector<std::string>& items);

std::string queue_type_name(uint32_t uapi_type);
nlohmann::json queue_json(const kfd::QueueInfo& q, bool suspended);
nlohmann::json batch_json(const preempt::BatchOutcome& o);
std::string batch_table(const kfd::BatchResult& r);
// Notices the context produced (watchdog, exits) as JSON and as text lines.
nlohmann::json notices_json(preempt::Context& ctx, std::string* text);

}  // namespace gpreempt::cli
