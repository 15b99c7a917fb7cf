// torch_mode kernel traces (docs/torch.md): one JSON line per finished dispatch, {"pid",
// "queue_id", "name", "grid", "workgroup", "flops", "bytes", "submit_us", "start_us", "end_us"}
// on the simulated GPU clock, replayed with their dependencies:
//
// * each queue of the trace becomes a queue of the program, in order of first submission;
// * kernels run in submission order on their queue (HIP streams are in order);
// * a kernel submitted after another one had already finished was launched by a host that waited
//   for it (a synchronize, an .item()): it waits for that kernel in the replay too — the latest
//   one finished by then — and keeps the host time in between (submit − end). A kernel submitted
//   while everything before it was still queued or running waits for nothing (asynchronous).
// * a kernel's duration is its traced run time (end − start) minus the CP's packet overhead,
//   spread over the workgroup rounds its grid needs on the replaying profile (wg_cost_for).
#pragma once

#include <string>

#include "eval/des/program.h"

namespace gpreempt::eval::des {

// Throws SpecError naming `spec_path` and the file's line for unreadable or malformed input.
Program load_kernel_trace(const std::string& file, const sim::gpu::GpuProfile& p,
                          const std::string& spec_path);

}  // namespace gpreempt::eval::des
