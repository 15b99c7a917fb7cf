#include "sim/gpu/model_config.h"

#include <charconv>
#include <functional>

namespace gpreempt::sim::gpu {

namespace {

bool fail(std::string* error, std::string msg) {
  if (error) *error = std::move(msg);
  return false;
}

template <typename T>
bool parse_number(std::string_view text, T& out) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && p == text.data() + text.size();
}

}  // namespace

bool set_profile_param(GpuProfile& p, std::string_view name, std::string_view value,
                       std::string* error) {
  using U32 = uint32_t GpuProfile::*;
  using I64 = SimTime GpuProfile::*;
  using U64 = uint64_t GpuProfile::*;
  using F64 = double GpuProfile::*;
  static const std::map<std::string, U32, std::less<>> u32s = {
      {"num_xcc", &GpuProfile::num_xcc},
      {"cus_per_xcc", &GpuProfile::cus_per_xcc},
      {"max_waves_per_cu", &GpuProfile::max_waves_per_cu},
      {"max_workgroups_per_cu", &GpuProfile::max_workgroups_per_cu},
      {"clock_mhz", &GpuProfile::clock_mhz},
      {"compute_pipes", &GpuProfile::compute_pipes},
      {"queues_per_pipe", &GpuProfile::queues_per_pipe},
      {"default_grace_kclk", &GpuProfile::default_grace_kclk},
      {"vgprs_per_simd_lane", &GpuProfile::vgprs_per_simd_lane},
      {"sgprs_per_simd", &GpuProfile::sgprs_per_simd},
      {"lds_bytes_per_cu", &GpuProfile::lds_bytes_per_cu}};
  static const std::map<std::string, I64, std::less<>> i64s = {
      {"oversubscription_quantum_ns", &GpuProfile::oversubscription_quantum_ns},
      {"unmap_latency_ns", &GpuProfile::unmap_latency_ns},
      {"map_latency_ns", &GpuProfile::map_latency_ns},
      {"grace_packet_ns", &GpuProfile::grace_packet_ns},
      {"suspend_copy_ns", &GpuProfile::suspend_copy_ns},
      {"preemption_timeout_ns", &GpuProfile::preemption_timeout_ns},
      {"save_fixed_ns", &GpuProfile::save_fixed_ns},
      {"restore_fixed_ns", &GpuProfile::restore_fixed_ns},
      {"packet_overhead_ns", &GpuProfile::packet_overhead_ns}};
  static const std::map<std::string, U64, std::less<>> u64s = {
      {"cwsr_vgpr_bytes_per_cu", &GpuProfile::cwsr_vgpr_bytes_per_cu},
      {"cwsr_sgpr_bytes_per_cu", &GpuProfile::cwsr_sgpr_bytes_per_cu},
      {"cwsr_lds_bytes_per_cu", &GpuProfile::cwsr_lds_bytes_per_cu},
      {"cwsr_hwreg_bytes_per_cu", &GpuProfile::cwsr_hwreg_bytes_per_cu}};
  static const std::map<std::string, F64, std::less<>> f64s = {
      {"save_bandwidth_gbps", &GpuProfile::save_bandwidth_gbps},
      {"restore_bandwidth_gbps", &GpuProfile::restore_bandwidth_gbps},
      {"matrix_fp64_flops_per_clk_cu", &GpuProfile::matrix_fp64_flops_per_clk_cu},
      {"matrix_fp32_flops_per_clk_cu", &GpuProfile::matrix_fp32_flops_per_clk_cu},
      {"matrix_tf32_flops_per_clk_cu", &GpuProfile::matrix_tf32_flops_per_clk_cu},
      {"matrix_fp16_flops_per_clk_cu", &GpuProfile::matrix_fp16_flops_per_clk_cu},
      {"matrix_bf16_flops_per_clk_cu", &GpuProfile::matrix_bf16_flops_per_clk_cu},
      {"matrix_fp8_flops_per_clk_cu", &GpuProfile::matrix_fp8_flops_per_clk_cu},
      {"matrix_int8_flops_per_clk_cu", &GpuProfile::matrix_int8_flops_per_clk_cu},
      {"vector_fp64_flops_per_clk_cu", &GpuProfile::vector_fp64_flops_per_clk_cu},
      {"vector_fp32_flops_per_clk_cu", &GpuProfile::vector_fp32_flops_per_clk_cu},
      {"vector_fp16_flops_per_clk_cu", &GpuProfile::vector_fp16_flops_per_clk_cu},
      {"hbm_bandwidth_gbps", &GpuProfile::hbm_bandwidth_gbps},
      {"math_efficiency", &GpuProfile::math_efficiency},
      {"hbm_efficiency", &GpuProfile::hbm_efficiency}};
  const std::string bad = "parameter " + std::string(name) + ": invalid value '" +
                          std::string(value) + "'";
  if (name == "cost_band") {
    const auto band = cost_band_by_name(value);
    if (!band) return fail(error, bad + " (low, central, high)");
    apply_cost_band(p, *band);
    return true;
  }
  if (auto it = u32s.find(name); it != u32s.end()) {
    uint32_t v = 0;
    if (!parse_number(value, v) || v == 0) return fail(error, bad);
    p.*(it->second) = v;
    return true;
  }
  if (auto it = i64s.find(name); it != i64s.end()) {
    SimTime v = 0;
    if (!parse_number(value, v) || v < 0) return fail(error, bad);
    p.*(it->second) = v;
    return true;
  }
  if (auto it = u64s.find(name); it != u64s.end()) {
    uint64_t v = 0;
    if (!parse_number(value, v)) return fail(error, bad);
    p.*(it->second) = v;
    return true;
  }
  if (auto it = f64s.find(name); it != f64s.end()) {
    double v = 0;
    if (!parse_number(value, v) || v <= 0) return fail(error, bad);
    p.*(it->second) = v;
    return true;
  }
  return fail(error, "unknown profile parameter '" + std::string(name) + "'");
}

std::optional<GpuModelOptions> parse_model_config(const std::map<std::string, std::string>& env,
                                                  std::string* error) {
  auto get = [&](const char* k) -> const std::string* {
    auto it = env.find(k);
    return it == env.end() || it->second.empty() ? nullptr : &it->second;
  };
  GpuModelOptions o;
  if (auto v = get("GPREEMPT_SIM_PROFILE")) {
    auto p = profile_by_name(*v);
    if (!p) {
      fail(error, "GPREEMPT_SIM_PROFILE: unknown profile '" + *v + "' (mi308x, mi300x, mi210)");
      return std::nullopt;
    }
    o.profile = *p;
  }
  if (auto v = get("GPREEMPT_SIM_PARAMS")) {
    // The band comes first wherever it is written: a single override of a banded cost then
    // replaces that cost only, whatever the order.
    for (std::string_view rest = *v; !rest.empty();) {
      const auto comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      if (item.substr(0, item.find('=')) == "cost_band") {
        std::string e;
        if (!set_profile_param(o.profile, "cost_band", item.substr(item.find('=') + 1), &e)) {
          fail(error, "GPREEMPT_SIM_PARAMS: " + e);
          return std::nullopt;
        }
      }
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    std::string_view text = *v;
    while (!text.empty()) {
      const auto comma = text.find(',');
      const std::string_view item = text.substr(0, comma);
      const auto eq = item.find('=');
      if (eq == std::string_view::npos) {
        fail(error, "GPREEMPT_SIM_PARAMS: '" + std::string(item) + "' is not name=value");
        return std::nullopt;
      }
      std::string e;
      if (item.substr(0, eq) == "cost_band") {
        // applied above
      } else if (!set_profile_param(o.profile, item.substr(0, eq), item.substr(eq + 1), &e)) {
        fail(error, "GPREEMPT_SIM_PARAMS: " + e);
        return std::nullopt;
      }
      if (comma == std::string_view::npos) break;
      text.remove_prefix(comma + 1);
    }
  }
  if (auto v = get("GPREEMPT_SIM_PREEMPT_TIMEOUT_MS")) {
    uint64_t ms = 0;
    if (!parse_number(std::string_view(*v), ms) || ms == 0) {
      fail(error, "GPREEMPT_SIM_PREEMPT_TIMEOUT_MS: expected a positive integer, got '" + *v + "'");
      return std::nullopt;
    }
    o.profile.preemption_timeout_ns = static_cast<SimTime>(ms) * 1'000'000;
  }
  if (auto v = get("GPREEMPT_SIM_FAULTS")) {
    std::string e;
    auto plan = parse_fault_plan(*v, &e);
    if (!plan) {
      fail(error, "GPREEMPT_SIM_FAULTS: " + e);
      return std::nullopt;
    }
    o.engine.faults = *plan;
  }
  if (auto v = get("GPREEMPT_SIM_SEED")) {
    if (!parse_number(std::string_view(*v), o.engine.seed)) {
      fail(error, "GPREEMPT_SIM_SEED: expected an unsigned integer, got '" + *v + "'");
      return std::nullopt;
    }
  }
  if (auto v = get("GPREEMPT_SIM_WG_JITTER")) {
    if (!parse_number(std::string_view(*v), o.engine.wg_jitter) || o.engine.wg_jitter < 0) {
      fail(error, "GPREEMPT_SIM_WG_JITTER: expected a number >= 0, got '" + *v + "'");
      return std::nullopt;
    }
  }
  return o;
}

}  // namespace gpreempt::sim::gpu
