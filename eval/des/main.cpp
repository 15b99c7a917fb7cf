// gpreempt-des: one evaluation point in simulated time. The harness (`gpreempt eval`) calls it
// once per point; docs/evaluation-des.md is the reference of SPEC and RESULT.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "common/json_conventions.h"
#include "common/latency_summary.h"
#include "eval/des/result.h"
#include "eval/des/policy.h"
#include "eval/des/simulation.h"
#include "eval/des/spec.h"

namespace des = gpreempt::eval::des;
namespace jc = gpreempt::json_conventions;

namespace {

constexpr const char* kFooter = R"(SPEC (JSON; every field but one of online/offline is optional):
  {"profile": "mi308x", "gpus": 1, "duration_s": 60, "seed": 1,
   "baseline": "@BASELINES@",
   "online":  [{"name": "resnet18", "gpu": 0,            # or "gpus": [0,1,...] (tensor-parallel)
                "arrival": {"kind": "poisson|periodic|bursty|uniform", "rate_hz": 20,
                            "burst_size": 4},            # uniform: min_interval_ms, max_interval_ms
                "requests": 1000,                        # stop after this many (else duration_s)
                "kernels": [{"name": "conv", "duration_us": 300, "cus": 80}]
                           # or "trace": "r18.jsonl" (gpreempt.sim torch_mode trace)
                "allreduce": {"every": 2, "us": 25}      # tensor-parallel: collective after every
               },                                        # 2nd kernel, gated by the slowest shard
               {"name": "chat", "gpu": 0, "arrival": {...}, "requests": 1000,
                "llm": {"steps": "llama-8b-steps.json",  # an LLM server instead of kernels/trace:
                        "lengths": [[230, 200], ...],    # python3 -m gpreempt.sim.llm.step_grid
                        "kv_blocks": 76000, "max_num_seqs": 256, "max_num_batched_tokens": 8192,
                        "step_gap_us": 0, "merge_vector_kernels": true,
                        "slo": {"ttft_ms": 500, "tpot_ms": 30}}}],
   "offline": [{"name": "resnet50-train", "gpu": 0, "queues": 1, "kernels": [...]}],
   "policy": {"grace_us": null, "idle_hysteresis_us": 2000, "poll_interval_us": 200,
              "early_hint_us": 2000, "min_share": 0.1, "window_ms": 1000,
              "max_suspension_ms": 500},                 # unset: lib/sched's defaults
   "model": {"cwsr_save_scale": 1.0, "hws_roundtrip_scale": 1.0, "faults": "timeout@3"},
   "throttle": {"max_in_flight": 2}, "partition": {"online_cu_fraction": 0.25},
   "record": {"latencies": true, "timeline": false, "decisions": true}, "solo": false}

Baselines: none (no control); priority (online queue at KFD priority 15, offline at 0: the CP
picks which queue dispatches next, running waves are never preempted); throttle (XSched Lv1: the
offline host holds its launches while an online request is pending, at most max_in_flight
launched); partition (CU masks: online gets online_cu_fraction of every XCC's CUs, offline the
rest); gpreempt-hint / gpreempt-early (RequestExpected early_hint_us before each arrival) /
gpreempt-transparent (queue pointers polled every poll_interval_us): the real lib/sched Runtime
deciding, suspend/resume costing the modelled HWS round trip, grace and CWSR save; oracle
(instant, free preemption: the bound).

RESULT: {"schema_version", "spec", "row": {baseline, online_requests, online_p50/p95/p99/mean_ms,
online_solo_p50_ms, offline_iterations, offline_iterations_per_s, offline_gpu_busy_fraction,
online_gpu_busy_fraction, ttft_p99_ms, tpot_p99_ms, slo_attainment, p99_meets_slo,
output_tokens_per_s, suspensions, flaps, suspended_s, actuation_timeouts, waves_saved, sim_seconds,
wall_seconds, events}, "clients", "llm" (per LLM server: TTFT/TPOT/E2E, tokens/s, attainment),
"latencies_ms", "timeline", "decisions"}  (schemas/des-result.schema.json)

Exit codes: 0 ok; 1 operational failure (unreadable file); 2 bad spec or usage (the message
names the JSON path of the bad field, e.g. "online[0].arrival.rate_hz: ...").
Example:
  gpreempt-des --spec point.json --out result.json
Reference: docs/evaluation-des.md)";

void fail_json(const std::string& code, int exit_code, const std::string& message, bool to_stdout) {
  std::cerr << "gpreempt-des: " << message << "\n";
  if (to_stdout) {
    nlohmann::ordered_json body;
    body["error"] = jc::error_object(code, std::nullopt, message);
    std::cout << jc::document(body).dump(2) << "\n";
  }
  std::exit(exit_code);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpreempt-des: run one evaluation point (online clients, offline jobs, one baseline) "
               "on the simulated GPU model in simulated time, with the real lib/sched policy"};
  std::string spec_path, out_path;
  bool no_wall = false, json_errors = false;
  app.add_option("--spec", spec_path, "the point to run (JSON, see below); - reads stdin")->required();
  app.add_option("--out", out_path, "write the RESULT here (default: stdout)");
  app.add_flag("--no-wall-clock", no_wall,
               "write wall_seconds as null, so that the same spec gives byte-identical output");
  app.add_flag("--json-errors", json_errors, "also print failures as a JSON error document on stdout");
  // The baselines as the registry has them (eval/des/policy_registry.cpp).
  std::string footer = kFooter;
  std::string names;
  for (const auto& b : des::baseline_names()) names += (names.empty() ? "" : "|") + b;
  footer.replace(footer.find("@BASELINES@"), 11, names);
  app.footer(footer);
  CLI11_PARSE(app, argc, argv);

  nlohmann::ordered_json doc;
  std::string base_dir;
  try {
    if (spec_path == "-") {
      doc = nlohmann::ordered_json::parse(std::cin);
    } else {
      std::ifstream in(spec_path);
      if (!in) fail_json("failed", 1, "cannot read spec " + spec_path, json_errors);
      std::stringstream ss;
      ss << in.rdbuf();
      doc = nlohmann::ordered_json::parse(ss.str());
      base_dir = std::filesystem::path(spec_path).parent_path().string();
    }
  } catch (const nlohmann::json::parse_error& e) {
    fail_json("usage", 2, spec_path + ": not JSON: " + e.what(), json_errors);
  }
  try {
    const des::Spec spec = des::parse_spec(doc, base_dir);
    const auto t0 = std::chrono::steady_clock::now();
    des::RunResult r = des::run_simulation(spec);
    des::RunInfo info;
    if (spec.solo && !spec.online.empty()) {
      des::Spec alone = spec;
      alone.offline.clear();
      alone.baseline = "none";
      alone.record = {};
      alone.record.timeline = false;
      alone.record.decisions = false;
      const auto s = des::run_simulation(alone);
      std::vector<double> all;
      for (const auto& c : s.clients) all.insert(all.end(), c.latencies_ms.begin(), c.latencies_ms.end());
      if (!all.empty()) info.solo_p50_ms = gpreempt::percentile(all, 50);
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!no_wall) info.wall_seconds = wall;
    const std::string text = des::result_document(spec, r, info).dump(2) + "\n";
    if (out_path.empty()) {
      std::cout << text;
    } else {
      std::ofstream out(out_path);
      out << text;
      if (!out.flush()) fail_json("failed", 1, "cannot write " + out_path, json_errors);
    }
  } catch (const des::SpecError& e) {
    fail_json("usage", 2, std::string("bad spec: ") + e.what(), json_errors);
  } catch (const std::exception& e) {
    fail_json("failed", 1, e.what(), json_errors);
  }
  return 0;
}
