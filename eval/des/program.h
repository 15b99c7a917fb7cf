// A request's or an iteration's work as the DES replays it: kernels on one or more in-order
// queues, each launched by the host once the kernels it waits for have finished (plus the host's
// own time in between). Built from a spec kernel list (one queue, no host waits: the host
// launches everything at once) or from a torch_mode kernel trace (kernel_trace.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "eval/des/spec.h"
#include "sim/gpu/kernel.h"
#include "sim/gpu/profile.h"

namespace gpreempt::eval::des {

struct Step {
  sim::gpu::KernelSpec kernel;
  uint32_t queue = 0;                // index into the program's queues
  std::vector<uint32_t> after;       // steps (earlier ones) that must finish before the launch
  sim::gpu::SimTime host_delay_ns = 0;  // host time between the last of those and the launch
  // Tensor parallel: the shards' collective that follows this kernel (0: none). It starts when
  // the kernel has finished on every GPU of the client and holds what comes after it
  // (gate_collectives); the Simulation runs it (simulation_clients.cpp).
  sim::gpu::SimTime collective_ns = 0;
};

struct Program {
  std::vector<Step> steps;  // launch order
  uint32_t queues = 1;
  // The whole program alone on an idle device, as the spec or the trace says (ns).
  sim::gpu::SimTime nominal_ns = 0;
};

// Every step after a step with a collective waits for it, on every queue (the first such step of
// each queue: the queue's order holds the rest).
void gate_collectives(Program& p);

// The kernel that keeps `cus` CUs busy for `duration_us` in `rounds` workgroup rounds.
sim::gpu::KernelSpec kernel_from_def(const KernelDef& d, const sim::gpu::GpuProfile& p);

// Kernel list: kernel i on queue i mod `queues`, no host waits.
Program program_from_kernels(const std::vector<KernelDef>& kernels, uint32_t queues,
                             const sim::gpu::GpuProfile& p);

// `def` as a program: the kernel list, or the trace file read by kernel_trace.h. Throws SpecError
// (path `path`) for an unreadable or malformed trace.
Program load_program(const ProgramDef& def, uint32_t queues, const sim::gpu::GpuProfile& p,
                     const std::string& path);

}  // namespace gpreempt::eval::des
