#include "eval/des/program.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "eval/des/kernel_trace.h"

namespace gpreempt::eval::des {

using sim::gpu::SimTime;

sim::gpu::KernelSpec kernel_from_def(const KernelDef& d, const sim::gpu::GpuProfile& p) {
  sim::gpu::KernelSpec k;
  k.name = d.name;
  k.resources = sim::gpu::resources_for(d.kind);
  if (d.workgroups) {
    const uint32_t wpw = std::max<uint32_t>(d.waves_per_workgroup, 1);
    k.workgroup = {wpw * p.wave_size, 1, 1};
    k.grid = {static_cast<uint32_t>(std::min<uint64_t>(*d.workgroups * wpw * p.wave_size, UINT32_MAX)), 1, 1};
    k.wg_cost_ns = std::max<SimTime>(1, static_cast<SimTime>(std::llround(d.wg_cost_us * 1e3)));
    return k;
  }
  const uint32_t cus = std::min(d.cus.value_or(p.total_cus()), p.total_cus());
  const uint32_t wpw = std::max<uint32_t>(d.waves_per_workgroup, 1);
  k.workgroup = {wpw * p.wave_size, 1, 1};
  // A full CU holds as many workgroups as the kernel's registers, waves and LDS allow; the
  // kernel's duration alone stays rounds × wg_cost whatever that is.
  std::string error;
  const auto occ = sim::gpu::occupancy(p, k, &error);
  if (!occ) throw std::invalid_argument(error);
  const uint64_t per_cu = occ->wgs_per_cu;
  const uint64_t wgs = static_cast<uint64_t>(cus) * per_cu * d.rounds;
  k.grid = {static_cast<uint32_t>(std::min<uint64_t>(wgs * wpw * p.wave_size, UINT32_MAX)), 1, 1};
  k.wg_cost_ns = std::max<SimTime>(1, static_cast<SimTime>(std::llround(d.duration_us * 1e3 / d.rounds)));
  return k;
}

Program program_from_kernels(const std::vector<KernelDef>& kernels, uint32_t queues,
                             const sim::gpu::GpuProfile& p) {
  Program prog;
  prog.queues = std::max<uint32_t>(queues, 1);
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    Step s;
    s.kernel = kernel_from_def(kernels[i], p);
    s.queue = static_cast<uint32_t>(i % prog.queues);
    prog.nominal_ns += p.packet_overhead_ns +
                       (kernels[i].workgroups ? static_cast<SimTime>(kernels[i].wg_cost_us * 1e3)
                                              : static_cast<SimTime>(kernels[i].duration_us * 1e3));
    prog.steps.push_back(std::move(s));
  }
  return prog;
}

void gate_collectives(Program& p) {
  for (uint32_t s = 0; s < p.steps.size(); ++s) {
    if (p.steps[s].collective_ns <= 0) continue;
    std::vector<uint8_t> gated(p.queues, 0);
    uint32_t left = p.queues;
    for (uint32_t d = s + 1; d < p.steps.size() && left > 0; ++d) {
      if (gated[p.steps[d].queue]) continue;
      gated[p.steps[d].queue] = 1;
      --left;
      auto& after = p.steps[d].after;
      if (std::find(after.begin(), after.end(), s) == after.end()) after.push_back(s);
    }
  }
}

Program load_program(const ProgramDef& def, uint32_t queues, const sim::gpu::GpuProfile& p,
                     const std::string& path) {
  if (!def.trace.empty()) return load_kernel_trace(def.trace, p, path + ".trace");
  return program_from_kernels(def.kernels, queues, p);
}

}  // namespace gpreempt::eval::des
