// What one DES point is: the machine, the workloads, the baseline and the policy knobs, read from
// the SPEC document of `gpreempt-des --spec` (docs/evaluation-des.md lists every field). Parsing
// checks everything and names the JSON path of the first bad field, so a harness that writes a
// wrong spec learns which key, not just that something failed.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sched/objective.h"
#include "sim/gpu/cwsr_model.h"
#include "sim/gpu/profile.h"

namespace gpreempt::eval::des {

// A spec error: `path` is the JSON path of the offending field ("online[0].arrival.rate_hz").
class SpecError : public std::runtime_error {
 public:
  SpecError(std::string path, const std::string& message)
      : std::runtime_error(path + ": " + message), path_(std::move(path)) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// One kernel of a sequence: it keeps `cus` compute units busy for `duration_us` when alone.
struct KernelDef {
  std::string name;
  double duration_us = 0;
  std::optional<uint32_t> cus;       // default: every CU of the GPU
  uint32_t rounds = 1;               // workgroup rounds (waves live duration_us / rounds)
  uint32_t waves_per_workgroup = 4;  // 256 work-items
  // Its register model (sim/gpu/cwsr_model.h): occupancy and the CWSR save follow from it.
  sim::gpu::KernelKind kind = sim::gpu::KernelKind::kGeneric;
  // Alternatively the engine's own terms: this many workgroups of wg_cost_us each (duration_us,
  // cus and rounds are then not used).
  std::optional<uint64_t> workgroups;
  double wg_cost_us = 0;
};

// A request or an iteration: a kernel sequence on one queue, or a torch_mode trace.
struct ProgramDef {
  std::vector<KernelDef> kernels;
  std::string trace;  // path of a JSON Lines kernel trace; empty: `kernels`
};

enum class ArrivalKind { kPoisson, kPeriodic, kBursty, kUniform };
struct ArrivalDef {
  ArrivalKind kind = ArrivalKind::kPoisson;
  double rate_hz = 0;          // poisson, periodic, bursty (mean request rate)
  uint32_t burst_size = 4;     // bursty: requests per burst
  double burst_gap_us = 0;     // bursty: between the requests of one burst
  double min_interval_ms = 0;  // uniform
  double max_interval_ms = 0;  // uniform
};

// A tensor-parallel request's collective: after every `every`-th kernel of its program (1-based:
// kernels every, 2*every, ...), the shards exchange partial results (an all-reduce). It starts when
// that kernel has finished on every GPU of the request — the slowest shard gates it — lasts `us`
// (link latency and transfer, off the CUs), and the shards' next kernels wait for its end.
//
// A tensor-parallel LLM server (online[].llm with several GPUs) takes its collectives' places from
// its step grid instead of `every`, and each lasts `us` plus the bus bytes the grid gives it at
// `bus_gbps` (eval/des/llm/step_grid.h: a ring all-reduce's time).
struct AllReduceDef {
  uint32_t every = 1;
  double us = 0;  // 0: no collective (shards run independently, the request ends with the last)
  double bus_gbps = 0;  // LLM servers: each GPU's link bandwidth for the bytes it sends; 0: free
};

// An online client that is an LLM server (docs/llm.md, "The DES form"): continuous batching over
// requests of the given lengths arriving as `arrival` says, each step's kernels from a step grid.
struct LlmServerDef {
  std::string steps;                                    // step grid (gpreempt.sim.llm.step_grid)
  std::vector<std::pair<uint32_t, uint32_t>> lengths;   // (prompt, output) tokens per request
  uint32_t max_num_seqs = 256;
  uint32_t max_num_batched_tokens = 8192;
  uint64_t kv_blocks = 0;        // KV cache blocks of the grid's block size
  double step_gap_us = 0;        // host time between a step's last kernel and the next launch
  bool merge_vector_kernels = true;  // consecutive vector kernels as one (llm/step_grid.h)
  double ttft_slo_ms = 500;      // the objectives attainment is judged by
  double tpot_slo_ms = 30;
};

struct OnlineDef {
  std::string name;
  std::vector<uint32_t> gpus;  // indices; more than one: tensor-parallel (a request runs on all)
  ArrivalDef arrival;
  std::optional<uint64_t> requests;
  ProgramDef program;
  AllReduceDef allreduce;
  std::optional<LlmServerDef> llm;  // set: `program` is unused, each step has its own
};

struct OfflineDef {
  std::string name;
  std::vector<uint32_t> gpus;
  uint32_t queues = 1;          // kernel sequences: kernel i goes to queue i mod queues
  uint32_t max_in_flight = 64;  // launched but unfinished kernels per GPU (host run-ahead)
  std::optional<bool> sync_each_iteration;  // default: false for kernels, true for traces
  ProgramDef program;
  // false: a job gpreemptd cannot suspend (say one on ROCm < 5.7 user space, which enables its
  // runtime through the pre-upstream ABI, docs/architecture.md): the gpreempt baselines' Runtime
  // never hears of it. Only those baselines take it; the others treat every job alike.
  bool managed = true;
};

struct PolicyDef {
  // Unset fields keep lib/sched's defaults (ArbiterConfig, kDefaultPollInterval).
  std::optional<double> grace_us;
  std::optional<double> idle_hysteresis_us;
  std::optional<double> poll_interval_us;
  double early_hint_us = 2000;
  std::optional<double> min_share;
  std::optional<double> window_ms;
  std::optional<double> max_suspension_ms;
  std::optional<double> hold_after_idle_us;
  std::optional<double> resume_defer_max_us;
  std::optional<bool> coalesce_flaps;
  // The online class's objective, as gpreemptd's `[[class]] slo` (lib/sched/objective.h):
  // {"p99_ms": 5, "window_s": 10}, or for an LLM server {"ttft_p99_ms": 500, "tpot_p99_ms": 30}.
  // Unset, every request is protected. slo_percentile: the request-latency goal's, if stated.
  std::optional<double> slo_percentile;
  double slo_target_ms = 0;
  std::optional<sched::Goal> slo_ttft, slo_tpot;
  double slo_window_s = 10;
  bool has_slo() const { return slo_percentile || slo_ttft || slo_tpot; }
};

struct ModelDef {
  // Point of every banded cost (sim/gpu/profile.h CostBands; docs/sim-model.md §5), applied
  // before `params` and the scales.
  sim::gpu::CostBand cost_band = sim::gpu::CostBand::kCentral;
  double cwsr_save_scale = 1.0;      // multiplies the CWSR save and restore cost
  double hws_roundtrip_scale = 1.0;  // multiplies the HWS unmap and map latencies
  std::string faults;                // sim/gpu fault plan, e.g. "timeout@3"
  double wg_jitter = 0.0;
  double actuator_overhead_us = 0.0;  // daemon hop + ioctl entry before the HWS sees a request
  // Overrides of GpuProfile fields by name (sim/gpu/model_config.h set_profile_param), applied
  // before the scales: {"save_bandwidth_gbps": 200, "packet_overhead_ns": 4000}.
  std::vector<std::pair<std::string, std::string>> params;
};

struct RecordDef {
  bool latencies = true;
  bool timeline = false;
  double timeline_from_s = 0;
  double timeline_to_s = 1e300;
  bool decisions = true;
};

struct Spec {
  nlohmann::ordered_json source;  // the document as given (echoed in the result)
  std::string profile = "mi308x";
  uint32_t gpus = 1;
  double duration_s = 10;
  uint64_t seed = 1;
  std::string baseline = "none";  // a name of policy_registry.cpp (eval/des/policies/)
  std::vector<OnlineDef> online;
  std::vector<OfflineDef> offline;
  PolicyDef policy;
  ModelDef model;
  uint32_t throttle_max_in_flight = 2;
  double partition_online_cu_fraction = 0.25;
  RecordDef record;
  bool solo = false;  // also run the online clients alone and report online_solo_p50_ms
};

// Throws SpecError. Trace paths are resolved against `base_dir` when relative.
Spec parse_spec(const nlohmann::ordered_json& doc, const std::string& base_dir = "");

}  // namespace gpreempt::eval::des
