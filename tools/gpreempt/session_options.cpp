#include "session_options.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "cli_common.h"
#include "common/error.h"
#include "kfd/grace.h"
#include "discovery/topology.h"

namespace gpreempt::cli {

void add_session_options(CLI::App* cmd, SessionOptions& o) {
  cmd->add_option("--pid,-p", o.pid, "Target process id (its main thread gets ptrace-seized)")
      ->required()
      ->check(cli_common::at_least(1));
  cmd->add_option("--device", o.device, "KFD device node")->capture_default_str();
  cmd->add_option("--watchdog-ms", o.watchdog_ms,
                  "Resume any queue suspended longer than this (0 = no watchdog)")
      ->capture_default_str();
}

std::unique_ptr<preempt::Context> open_context(const SessionOptions& o) {
  preempt::ContextOptions c;
  c.device_path = o.device;
  c.watchdog_bound = std::chrono::milliseconds(o.watchdog_ms);
  c.handle_signals = false;
  return std::make_unique<preempt::Context>(c);
}

void block_termination_signals() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &s, nullptr);
}

int wait_for_signal_or(int64_t timeout_ms) {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGHUP);
  if (timeout_ms < 0) {
    int sig = 0;
    while (sigwait(&s, &sig) != 0) {
    }
    return sig;
  }
  timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += timeout_ms / 1000;
  deadline.tv_nsec += (timeout_ms % 1000) * 1000000;
  if (deadline.tv_nsec >= 1000000000) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1000000000;
  }
  for (;;) {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t left_ns = (deadline.tv_sec - now.tv_sec) * 1000000000LL + (deadline.tv_nsec - now.tv_nsec);
    if (left_ns <= 0) return 0;
    timespec left{static_cast<time_t>(left_ns / 1000000000LL), static_cast<long>(left_ns % 1000000000LL)};
    int sig = sigtimedwait(&s, nullptr, &left);
    if (sig > 0) return sig;
    if (errno == EAGAIN) return 0;
  }
}

void add_grace_options(CLI::App* cmd, GraceOptions& g) {
  auto* units = cmd->add_option_function<uint32_t>(
      "--grace", [&g](const uint32_t& v) { g.units = v; },
      "Grace period in the kernel's unit: 1,000 GPU clock cycles of wave run time before the "
      "context-save preemption (0 is raised to 1 by GFX9 kernels; 4294967295 = driver default)");
  auto* us = cmd->add_option_function<uint64_t>(
      "--grace-us", [&g](const uint64_t& v) { g.us = v; },
      "Grace period in microseconds, converted at the GPU's max compute clock from the topology");
  units->excludes(us);
}

uint32_t resolve_grace(const GraceOptions& g, const std::vector<kfd::QueueInfo>& queues,
                       uint32_t* clock_mhz_out) {
  if (clock_mhz_out) *clock_mhz_out = 0;
  if (g.units) return *g.units;
  if (!g.us) return kfd::KFD_USE_DEFAULT_GRACE_PERIOD;
  auto nodes = discovery::read_gpu_nodes();
  uint32_t mhz = 0;
  for (const auto& q : queues)
    if (auto gpu = discovery::find_gpu(nodes, q.gpu_id)) mhz = std::max(mhz, gpu->max_engine_clk_fcompute);
  if (mhz == 0)
    for (const auto& n : nodes) mhz = std::max(mhz, n.max_engine_clk_fcompute);
  if (mhz == 0)
    throw Failure("--grace-us needs the GPU clock (max_engine_clk_fcompute) from the KFD "
                  "topology, and none was found; give --grace in kernel units instead");
  if (clock_mhz_out) *clock_mhz_out = mhz;
  return kfd::grace_units_from_us(*g.us, mhz);
}

std::vector<uint32_t> parse_queue_ids(const std::vector<std::string>& items) {
  std::vector<uint32_t> ids;
  for (const auto& item : items) {
    std::string_view s = item;
    while (!s.empty()) {
      auto cut = s.find_first_of(", ");
      std::string_view tok = s.substr(0, cut);
      s = cut == std::string_view::npos ? std::string_view() : s.substr(cut + 1);
      if (tok.empty()) continue;
      uint32_t v = 0;
      auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
      if (ec != std::errc() || p != tok.data() + tok.size() || v > kfd::KFD_DBG_QUEUE_ID_MASK)
        throw UsageError("--queues: \"" + std::string(tok) +
                         "\" is not a queue id (a decimal number below 2^30)");
      if (std::find(ids.begin(), ids.end(), v) != ids.end())
        throw UsageError("--queues: queue id " + std::to_string(v) + " is listed twice");
      ids.push_back(v);
    }
  }
  if (ids.empty()) throw UsageError("--queues: no queue ids given");
  return ids;
}

std::string queue_type_name(uint32_t t) {
  switch (t) {
    case kfd::KFD_IOC_QUEUE_TYPE_COMPUTE: return "compute";
    case kfd::KFD_IOC_QUEUE_TYPE_SDMA: return "sdma";
    case kfd::KFD_IOC_QUEUE_TYPE_COMPUTE_AQL: return "compute_aql";
    case kfd::KFD_IOC_QUEUE_TYPE_SDMA_XGMI: return "sdma_xgmi";
    default: return "type " + std::to_string(t);
  }
}

nlohmann::json queue_json(const kfd::QueueInfo& q, bool suspended) {
  // The type names of sysfs and debugfs ("compute" for AQL and PM4 alike); "aql" keeps the
  // distinction the KFD snapshot makes.
  const bool aql = q.queue_type == kfd::KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
  return {{"queue_id", q.queue_id},
          {"gpu_id", q.gpu_id},
          {"type", aql ? std::string("compute") : queue_type_name(q.queue_type)},
          {"aql", aql},
          {"ring_base", hex(q.ring_base_address)},
          {"ring_size_bytes", q.ring_size},
          {"rptr_address", hex(q.read_pointer_address)},
          {"wptr_address", hex(q.write_pointer_address)},
          {"ctx_save_base", hex(q.ctx_save_restore_address)},
          {"ctx_save_size_bytes", q.ctx_save_restore_size},
          {"exception_status", hex(q.exception_status)},
          {"new", (q.exception_status & kfd::KFD_EC_MASK(kfd::EC_QUEUE_NEW)) != 0},
          {"suspended_by_us", suspended}};
}

nlohmann::json batch_json(const preempt::BatchOutcome& o) {
  nlohmann::json queues = nlohmann::json::array();
  for (const auto& q : o.result.queues)
    queues.push_back({{"queue_id", q.queue_id}, {"status", kfd::outcome_name(q.outcome)}});
  return {{"count", o.result.count},
          {"requested", o.result.queues.size()},
          {"queues", queues},
          {"hop_us", json_conventions::round_us(o.timing.hop_ns / 1000.0)},
          {"ioctl_us", json_conventions::round_us(o.timing.ioctl_ns / 1000.0)},
          {"total_us", json_conventions::round_us(o.timing.total_ns / 1000.0)}};
}

std::string batch_table(const kfd::BatchResult& r) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& q : r.queues) {
    rows.push_back({std::to_string(q.queue_id), kfd::outcome_name(q.outcome),
                    kfd::outcome_meaning(q.outcome)});
  }
  return table({"QUEUE", "STATUS", ""}, rows);
}

nlohmann::json notices_json(preempt::Context& ctx, std::string* text) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& n : ctx.take_notices()) {
    out.push_back({{"pid", n.pid}, {"message", n.message}});
    if (text) *text += "note: " + n.message + "\n";
  }
  return out;
}

}  // namespace gpreempt::cli
