// `gpreempt doctor`: a preflight of a machine for gpreemptd. Each check looks at one thing the
// kernel or the process needs (docs/architecture.md, docs/kfd-interface.md) and says PASS, WARN or
// FAIL, what it saw, and for anything but PASS what to change. docs/doctor.md lists the checks.
//
// Everything is read through SystemFiles (a root directory) and a KfdProbe the caller fills by
// opening the device, so tests feed fake /proc and /sys trees and a fake probe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "doctor/system_files.h"

namespace gpreempt::doctor {

// The real stack gpreempt's suspend needs; stated by doctor, info and the README alike.
inline constexpr const char* kMinimumStack =
    "Linux >= 6.5 (or AMD's amdgpu-dkms driver) with ROCm >= 5.7 user space";

enum class Status { kPass, kWarn, kFail, kSkip };
const char* to_string(Status s);  // "PASS", "WARN", "FAIL", "SKIP"

struct CheckResult {
  std::string id;       // stable, snake_case: "kfd_ioctl_version", "rocm_user_space"
  Status status = Status::kPass;
  std::string summary;  // one line: what was found
  std::string fix;      // what to change (empty for PASS)
  std::optional<int> pid;  // the process a per-process check is about
};

// What opening the KFD device told (filled by probe_kfd(), or by a test).
struct KfdProbe {
  std::string device = "/dev/kfd";
  bool opened = false;
  int open_errno = 0;                       // when !opened
  std::optional<std::uint32_t> major, minor;  // GET_VERSION
  // DBG_TRAP on pid 0 answered -ESRCH (true: HWS, debug-trap reachable) or -EINVAL (false: no HWS,
  // or the interface refuses); nullopt when not asked (no device, version < 1.13) or other errno.
  std::optional<bool> hws;
};

// Opens `device` and asks GET_VERSION and the HWS probe (kfd/version.h). Never throws.
KfdProbe probe_kfd(const std::string& device = "/dev/kfd");

// What gpreemptd's socket said to doctor's `status` (the config_trust check).
struct RunningDaemon {
  std::string socket;
  std::optional<nlohmann::ordered_json> status;  // its status document, when it answered
  std::string error;                     // why it did not (no daemon, refused, timed out)
};

struct DoctorInputs {
  SystemFiles files;     // "/" on a real machine
  KfdProbe kfd;
  bool simulated = false;  // running under kfdsim (the shim answers the KFD paths)
  // Left out of the GPU processes: doctor itself, a KFD process once probe_kfd opened the device.
  std::optional<int> self_pid;
  // gpreemptd's config, for the config_trust check (config_trust.h); empty: that check is left out.
  std::string config_path;
  // What the running gpreemptd answered (config_trust reviews its settings); unset: not asked.
  std::optional<RunningDaemon> daemon;
};

// Every check, in the order people should fix them.
std::vector<CheckResult> run_checks(const DoctorInputs& in);

// Any FAIL?
bool any_failed(const std::vector<CheckResult>& results);

}  // namespace gpreempt::doctor
