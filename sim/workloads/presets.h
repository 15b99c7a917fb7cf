// Workload presets after the user's cases (docs/sim-model.md, "Workload presets"): what one
// online request dispatches and what one offline iteration dispatches.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "simrt/simrt.hpp"

namespace gpreempt::workloads {

struct Preset {
  std::string name;
  std::string description;
  std::vector<simrt::Kernel> online_request;  // one request, in order
  double online_rate_hz = 20.0;               // default arrival rate
  bool poisson = true;                        // default arrival process
  double online_preprocess_us = 0;            // host pre-processing before a request's kernels
  std::vector<simrt::Kernel> offline_iteration;
};

const std::vector<Preset>& presets();
std::optional<Preset> find_preset(std::string_view name);
// Work-items of a kernel (product of the grid).
uint64_t work_items(const simrt::Kernel& k);

}  // namespace gpreempt::workloads
