// GPU model configuration from text (environment variables of kfdsimd / kfdsim run), parsed
// without reading the environment itself: the caller passes what it found.
//
//   GPREEMPT_SIM_PROFILE            mi308x (default) | mi300x | mi210
//   GPREEMPT_SIM_FAULTS             e.g. "timeout@3,hang@5,eio@2,slow_save@1x50" (faults.h)
//   GPREEMPT_SIM_PREEMPT_TIMEOUT_MS queue_preemption_timeout_ms (default 9000)
//   GPREEMPT_SIM_PARAMS             profile overrides "name=value,...", e.g.
//                                   "save_bandwidth_gbps=200,unmap_latency_ns=50000";
//                                   "cost_band=low|central|high" picks the point of every
//                                   banded cost (profile.h CostBands) before the other overrides
//   GPREEMPT_SIM_SEED               seed of the workgroup jitter (default 1)
//   GPREEMPT_SIM_WG_JITTER          jitter fraction of workgroup durations (default 0)
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "sim/gpu/gpu_model.h"

namespace gpreempt::sim::gpu {

std::optional<GpuModelOptions> parse_model_config(const std::map<std::string, std::string>& env,
                                                  std::string* error = nullptr);

// One "name=value" override of a profile field; false (with `error`) for unknown names or values.
bool set_profile_param(GpuProfile& p, std::string_view name, std::string_view value,
                       std::string* error = nullptr);

// The variable names parse_model_config reads, for the daemon to collect.
inline constexpr const char* kModelEnvVars[] = {
    "GPREEMPT_SIM_PROFILE", "GPREEMPT_SIM_FAULTS", "GPREEMPT_SIM_PREEMPT_TIMEOUT_MS",
    "GPREEMPT_SIM_PARAMS",  "GPREEMPT_SIM_SEED",   "GPREEMPT_SIM_WG_JITTER"};

}  // namespace gpreempt::sim::gpu
