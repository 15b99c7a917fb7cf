// Fault injection for the simulated hardware scheduler. A plan is a list of rules, each naming
// which suspend it hits (1-based count of SUSPEND-type runlist updates on one GPU).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpreempt::sim::gpu {

enum class FaultKind {
  // HWS never acknowledges the unmap: queues keep running, and after the preemption timeout
  // the runlist update fails with -ETIME (KFD then sets bit 30 on every matched entry).
  kTimeout,
  // A wave never reaches its save point: dispatch stops, the save never completes, and only the
  // preemption timeout ends the stall (-ETIME). Every queue of the device stalls meanwhile.
  kHang,
  // A GPU reset is in progress: the update fails at once with -EIO.
  kEio,
  // The CWSR save takes `factor` times longer than the profile says.
  kSlowSave,
};

struct FaultRule {
  FaultKind kind = FaultKind::kTimeout;
  uint32_t nth = 1;        // which suspend (1-based)
  bool every = false;      // also every nth after that (nth, 2*nth, ...)
  double factor = 1.0;     // kSlowSave only
};

struct FaultPlan {
  std::vector<FaultRule> rules;
  // The first rule matching suspend number `n` (1-based), if any.
  std::optional<FaultRule> for_suspend(uint32_t n) const;
};

// Parses "timeout@3,hang@5,eio@2,slow_save@1x50,eio@4+" (`+` = every 4th, `xF` = factor).
// Returns nullopt with `error` describing the offending item on malformed text.
std::optional<FaultPlan> parse_fault_plan(std::string_view text, std::string* error = nullptr);
std::string to_string(FaultKind k);

}  // namespace gpreempt::sim::gpu
