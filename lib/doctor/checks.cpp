// The checks of `gpreempt doctor`, one function each, run in the order of kChecks below.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <sstream>

#include "common/error.h"
#include "common/proc_status.h"
#include "discovery/proc_parse.h"
#include "discovery/process_discovery.h"
#include "discovery/product_name.h"
#include "discovery/topology.h"
#include "doctor/config_trust.h"
#include "doctor/doctor.h"
#include "doctor/versions.h"

namespace gpreempt::doctor {

const char* to_string(Status s) {
  switch (s) {
    case Status::kPass: return "PASS";
    case Status::kWarn: return "WARN";
    case Status::kFail: return "FAIL";
    case Status::kSkip: return "SKIP";
  }
  return "?";
}

bool any_failed(const std::vector<CheckResult>& results) {
  return std::any_of(results.begin(), results.end(),
                     [](const CheckResult& r) { return r.status == Status::kFail; });
}

namespace {

constexpr const char* kParams = "/sys/module/amdgpu/parameters/";
constexpr int kCapSysPtrace = 19;  // linux/capability.h

using Results = std::vector<CheckResult>;

CheckResult make(std::string id, Status s, std::string summary, std::string fix = {}) {
  return CheckResult{std::move(id), s, std::move(summary), std::move(fix), std::nullopt};
}

bool version_ok(const KfdProbe& k) { return k.major == 1u && k.minor && *k.minor >= 13; }

std::optional<int> param(const DoctorInputs& in, const std::string& name) {
  auto line = in.files.read_line(std::string(kParams) + name);
  if (!line) return std::nullopt;
  try {
    std::size_t used = 0;
    const int v = std::stoi(*line, &used);
    if (used == 0) return std::nullopt;
    return v;
  } catch (...) {
    // A boolean parameter prints Y/N.
    if (*line == "Y") return 1;
    if (*line == "N") return 0;
    return std::nullopt;
  }
}

std::optional<bool> caller_has_cap(const DoctorInputs& in, int cap) {
  auto status = in.files.read("/proc/self/status");
  if (!status) return std::nullopt;
  auto eff = proc_status_field(*status, "CapEff");
  if (!eff) return std::nullopt;
  try {
    return ((std::stoull(std::string(*eff), nullptr, 16) >> cap) & 1u) != 0;
  } catch (...) {
    return std::nullopt;
  }
}

std::vector<discovery::GpuNode> gpus(const DoctorInputs& in, std::string* error) {
  try {
    return discovery::read_gpu_nodes(in.files.path(discovery::kTopologyRoot));
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return {};
  }
}

// ---- the checks ------------------------------------------------------------------------------

void check_kfd_device(const DoctorInputs& in, Results& out) {
  const auto& k = in.kfd;
  if (k.opened) {
    out.push_back(make("kfd_device", Status::kPass,
                       k.device + " opened" + (in.simulated ? " (the simulated KFD of kfdsim)" : "")));
    return;
  }
  std::string why = errno_text(k.open_errno);
  std::string fix;
  if (k.open_errno == ENOENT) {
    why = "it does not exist: amdgpu is not loaded, or this machine has no AMD GPU";
    fix = "load amdgpu (modprobe amdgpu; a container needs --device /dev/kfd); on a machine "
          "without an AMD GPU try the simulator: kfdsim run -- gpreempt doctor";
  } else if (k.open_errno == EACCES || k.open_errno == EPERM) {
    fix = "run as root, or add the user to the group owning " + k.device +
          " (usually 'render': usermod -aG render USER)";
  } else {
    fix = "check dmesg for amdgpu/KFD errors";
  }
  out.push_back(make("kfd_device", Status::kFail, "cannot open " + k.device + ": " + why, fix));
}

void check_kfd_version(const DoctorInputs& in, Results& out) {
  const auto& k = in.kfd;
  if (!k.opened) {
    out.push_back(make("kfd_ioctl_version", Status::kSkip, "not checked: needs " + k.device));
    return;
  }
  if (!k.major || !k.minor) {
    out.push_back(make("kfd_ioctl_version", Status::kFail, "GET_VERSION failed on " + k.device,
                       "check dmesg for amdgpu/KFD errors"));
    return;
  }
  const std::string v = std::to_string(*k.major) + "." + std::to_string(*k.minor);
  if (version_ok(in.kfd))
    out.push_back(make("kfd_ioctl_version", Status::kPass,
                       "KFD ioctl " + v + " (the debug-trap API SUSPEND/RESUME_QUEUES exists from 1.13)"));
  else
    out.push_back(make("kfd_ioctl_version", Status::kFail,
                       "KFD ioctl " + v + ": gpreempt needs >= 1.13 and < 2.0 (the debug-trap API)",
                       std::string("upgrade to ") + kMinimumStack));
}

void check_debug_trap(const DoctorInputs& in, Results& out) {
  if (!version_ok(in.kfd)) {
    out.push_back(make("debug_trap", Status::kSkip, "not checked: needs KFD ioctl >= 1.13"));
    return;
  }
  std::string error;
  const auto nodes = gpus(in, &error);
  if (nodes.empty()) {
    out.push_back(make("debug_trap", Status::kFail,
                       error.empty() ? "the KFD topology lists no GPU" : "KFD topology: " + error,
                       "check dmesg for amdgpu errors (a GPU the driver failed to initialise is "
                       "missing from the topology)"));
    return;
  }
  std::vector<std::string> without;
  for (const auto& g : nodes)
    if (!g.debug_trap_supported())
      without.push_back(std::to_string(g.gpu_id) + " (" + g.gfx_name() + ")");
  if (!without.empty()) {
    std::string list;
    for (const auto& w : without) list += (list.empty() ? "" : ", ") + w;
    out.push_back(make("debug_trap", Status::kFail,
                       "GPU(s) " + list + " do not advertise debug-trap support (HSA_CAP_TRAP_DEBUG_SUPPORT)",
                       "debug trap needs a GFX9 or newer GPU and current firmware (update "
                       "linux-firmware or amdgpu-dkms-firmware)"));
    return;
  }
  if (in.kfd.hws == false) {
    out.push_back(make("debug_trap", Status::kFail,
                       "DBG_TRAP is refused (EINVAL): the KFD runs without the hardware scheduler",
                       "see the scheduler check"));
    return;
  }
  if (!in.kfd.hws) {
    out.push_back(make("debug_trap", Status::kWarn,
                       "DBG_TRAP on pid 0 answered neither ESRCH nor EINVAL; its support is unclear",
                       "run gpreempt info and GPREEMPT_TRACE=1 gpreempt info to see the answer"));
    return;
  }
  // Which GPUs, as people know them: the topology's own name is "ip discovery" on every MI300.
  std::vector<std::string> kinds;
  for (const auto& g : nodes) {
    std::string k = discovery::display_name(g.gfx_target_version, g.device_id,
                                            in.files.path("/usr/share/libdrm/amdgpu.ids"));
    if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(std::move(k));
  }
  std::string kinds_text;
  for (const auto& k : kinds) kinds_text += (kinds_text.empty() ? "" : ", ") + k;
  out.push_back(make("debug_trap", Status::kPass,
                     std::to_string(nodes.size()) + " GPU(s) advertise debug trap (" + kinds_text +
                         "); DBG_TRAP is reachable"));
}

void check_scheduler(const DoctorInputs& in, Results& out) {
  const auto policy = param(in, "sched_policy");
  const std::string param_text =
      policy ? "amdgpu.sched_policy=" + std::to_string(*policy)
             : std::string("amdgpu.sched_policy not readable") +
                   (in.simulated ? " (simulated machine)" : "");
  const char* no_hws_fix =
      "load amdgpu with sched_policy=0 (the default): remove amdgpu.sched_policy=2 from the kernel "
      "command line or /etc/modprobe.d and reboot";
  if (policy == 2 || in.kfd.hws == false) {
    out.push_back(make("scheduler", Status::kFail,
                       "no hardware scheduler (" + param_text +
                           "): the KFD refuses every debug-trap call",
                       no_hws_fix));
    return;
  }
  std::vector<std::string> mes;
  for (const auto& g : gpus(in, nullptr))
    if (g.gfx_target_version >= 110000) mes.push_back(std::to_string(g.gpu_id) + " (" + g.gfx_name() + ")");
  if (!mes.empty()) {
    std::string list;
    for (const auto& m : mes) list += (list.empty() ? "" : ", ") + m;
    out.push_back(make("scheduler", Status::kWarn,
                       "GPU(s) " + list + " are scheduled by MES (GFX11+): suspend removes queues one "
                       "by one and ignores the grace period",
                       "none needed to run; gpreempt's policy and timings are built for HWS GPUs "
                       "(GFX9: MI100, MI200, MI300), expect other preemption costs"));
    return;
  }
  if (!policy && !in.kfd.opened) {
    out.push_back(make("scheduler", Status::kSkip, "not checked: no amdgpu module parameters and no KFD device"));
    return;
  }
  if (!policy && !in.kfd.hws) {
    out.push_back(make("scheduler", Status::kWarn,
                       param_text + ", and the KFD could not be asked",
                       "check cat /sys/module/amdgpu/parameters/sched_policy (0 or 1 is needed)"));
    return;
  }
  std::string how = policy ? param_text : param_text + "; the KFD answered as HWS does";
  out.push_back(make("scheduler", Status::kPass, "hardware scheduler (HWS) runs the queues (" + how + ")"));
}

void check_cwsr(const DoctorInputs& in, Results& out) {
  const auto v = param(in, "cwsr_enable");
  if (!v) {
    if (!in.kfd.opened)
      out.push_back(make("cwsr", Status::kSkip, "not checked: no amdgpu module parameters and no KFD device"));
    else if (in.simulated)
      out.push_back(make("cwsr", Status::kSkip,
                         "simulated machine: no amdgpu module parameters (its GPU model always "
                         "saves waves with CWSR)"));
    else
      out.push_back(make("cwsr", Status::kWarn,
                         "cannot read " + std::string(kParams) + "cwsr_enable (amdgpu not loaded as a module?)",
                         "check that amdgpu.cwsr_enable is 1 (the default)"));
    return;
  }
  if (*v == 0)
    out.push_back(make("cwsr", Status::kFail,
                       "compute wave save/restore is off (amdgpu.cwsr_enable=0): a suspend must wait "
                       "for running kernels to end, and a long kernel makes it time out",
                       "load amdgpu with cwsr_enable=1 (the default): remove amdgpu.cwsr_enable=0 "
                       "from the kernel command line or /etc/modprobe.d and reboot"));
  else
    out.push_back(make("cwsr", Status::kPass, "compute wave save/restore is on (amdgpu.cwsr_enable=" +
                                                  std::to_string(*v) + ")"));
}

void check_preemption_timeout(const DoctorInputs& in, Results& out) {
  const auto v = param(in, "queue_preemption_timeout_ms");
  if (!v) {
    if (!in.kfd.opened)
      out.push_back(make("queue_preemption_timeout", Status::kSkip, "not checked: no amdgpu module parameters and no KFD device"));
    else if (in.simulated)
      out.push_back(make("queue_preemption_timeout", Status::kSkip,
                         "simulated machine: no amdgpu module parameters (timeouts happen only "
                         "when injected)"));
    else
      out.push_back(make("queue_preemption_timeout", Status::kWarn,
                         "cannot read " + std::string(kParams) + "queue_preemption_timeout_ms",
                         "check amdgpu.queue_preemption_timeout_ms on the node"));
    return;
  }
  const std::string text = "amdgpu.queue_preemption_timeout_ms=" + std::to_string(*v) +
                           ": a suspend that cannot preempt within it fails (bit 30) and the "
                           "kernel resets the queue or GPU";
  if (*v < 1000)
    out.push_back(make("queue_preemption_timeout", Status::kWarn, text + "; this is short",
                       "raise it to the default (remove the override) unless it was set on purpose: "
                       "a loaded GPU may miss a short timeout and be reset"));
  else
    out.push_back(make("queue_preemption_timeout", Status::kPass, text));
}

void check_kernel(const DoctorInputs& in, Results& out) {
  const auto release_text = in.files.read_line("/proc/sys/kernel/osrelease");
  // A plain copy, not the optional: GCC 12 warns (maybe-uninitialized) through optional's storage.
  KernelRelease release{};
  bool parsed = false;
  if (release_text)
    if (auto r = parse_kernel_release(*release_text)) release = *r, parsed = true;
  const auto dkms = in.files.read_line("/sys/module/amdgpu/version");
  if (!parsed) {
    out.push_back(make("kernel", Status::kWarn, "cannot read the kernel release (/proc/sys/kernel/osrelease)",
                       std::string("make sure the node runs ") + kMinimumStack));
    return;
  }
  const std::string name = "Linux " + *release_text;
  if (release.major > 6 || (release.major == 6 && release.minor >= 5)) {
    out.push_back(make("kernel", Status::kPass, name + " (>= 6.5 has the debug-trap API)"));
  } else if (dkms && !dkms->empty()) {
    out.push_back(make("kernel", Status::kPass, name + " with AMD's amdgpu-dkms driver " + *dkms));
  } else if (version_ok(in.kfd)) {
    out.push_back(make("kernel", Status::kPass,
                       name + ": older than 6.5, but its KFD has the debug-trap API (a backport)"));
  } else {
    out.push_back(make("kernel", Status::kFail, name + ": older than 6.5 and no amdgpu-dkms driver",
                       std::string("upgrade to ") + kMinimumStack));
  }
}

void check_ptrace_scope(const DoctorInputs& in, Results& out) {
  const auto scope_text = in.files.read_line("/proc/sys/kernel/yama/ptrace_scope");
  if (!scope_text) {
    out.push_back(make("ptrace_scope", Status::kPass,
                       "Yama is not enabled: ptrace is limited only by uid and CAP_SYS_PTRACE"));
    return;
  }
  const auto cap = caller_has_cap(in, kCapSysPtrace);
  const std::string s = "kernel.yama.ptrace_scope=" + *scope_text;
  if (*scope_text == "0" || *scope_text == "1") {
    out.push_back(make("ptrace_scope", Status::kPass,
                       s + (*scope_text == "1" ? " (non-descendants need CAP_SYS_PTRACE, see below)" : "")));
  } else if (*scope_text == "2") {
    if (cap == true)
      out.push_back(make("ptrace_scope", Status::kPass, s + " (admin only; this caller has CAP_SYS_PTRACE)"));
    else
      out.push_back(make("ptrace_scope", Status::kFail, s + ": only CAP_SYS_PTRACE may attach, and this caller lacks it",
                         "run gpreemptd as root or with CAP_SYS_PTRACE"));
  } else {
    out.push_back(make("ptrace_scope", Status::kFail,
                       s + ": no process may attach to another, so gpreemptd cannot suspend anything",
                       "set kernel.yama.ptrace_scope=1 in /etc/sysctl.d/ and reboot (3 cannot be "
                       "lowered at run time)"));
  }
}

void check_cap_sys_ptrace(const DoctorInputs& in, Results& out) {
  const auto cap = caller_has_cap(in, kCapSysPtrace);
  if (cap == true)
    out.push_back(make("cap_sys_ptrace", Status::kPass, "this process has CAP_SYS_PTRACE"));
  else if (cap == false)
    out.push_back(make("cap_sys_ptrace", Status::kFail,
                       "this process lacks CAP_SYS_PTRACE: gpreemptd attaches to (and reads the "
                       "memory of) GPU processes of other users",
                       "run gpreemptd as root or with AmbientCapabilities=CAP_SYS_PTRACE "
                       "(deploy/systemd/gpreemptd.service), and run doctor the same way "
                       "(sudo gpreempt doctor)"));
  else
    out.push_back(make("cap_sys_ptrace", Status::kWarn, "cannot read CapEff from /proc/self/status",
                       "run gpreemptd as root or with CAP_SYS_PTRACE"));
}

void check_pid_namespace(const DoctorInputs& in, Results& out) {
  auto status = in.files.read("/proc/self/status");
  const auto nspid = status ? discovery::parse_nspid(*status) : std::vector<int>{};
  if (nspid.empty()) {
    out.push_back(make("pid_namespace", Status::kWarn, "no NSpid line in /proc/self/status",
                       "run gpreemptd in the host PID namespace"));
  } else if (nspid.size() > 1) {
    out.push_back(make("pid_namespace", Status::kFail,
                       "this process runs in a child PID namespace (pid " + std::to_string(nspid.back()) +
                           " here, " + std::to_string(nspid.front()) +
                           " outside): GPU processes of other containers are invisible and the "
                           "KFD's per-process sysfs names pids this namespace does not have",
                       "run gpreemptd in the host PID namespace (Kubernetes hostPID: true, "
                       "docker --pid=host)"));
  } else {
    out.push_back(make("pid_namespace", Status::kPass, "host PID namespace"));
  }
}

void check_debugfs(const DoctorInputs& in, Results& out) {
  int err = 0;
  const char* fix_mount =
      "mount -t debugfs none /sys/kernel/debug (Kubernetes: mount the host's /sys/kernel/debug); "
      "hint-triggered classes work without it, gpreempt map/decode and address cross-checks need it";
  if (in.files.read("/sys/kernel/debug/kfd/mqds", &err)) {
    out.push_back(make("debugfs", Status::kPass,
                       std::string("/sys/kernel/debug/kfd/mqds is readable") +
                           (in.simulated ? " (simulated)" : "")));
    return;
  }
  const auto mounts = in.files.read("/proc/mounts");
  bool mounted = false;
  if (mounts) {
    std::istringstream lines(*mounts);
    std::string dev, dir, type;
    std::string rest;
    while (lines >> dev >> dir >> type) {
      std::getline(lines, rest);
      if (type == "debugfs") mounted = true;
    }
  }
  if (!mounted)
    out.push_back(make("debugfs", Status::kWarn, "debugfs is not mounted", fix_mount));
  else if (err == EACCES || err == EPERM)
    out.push_back(make("debugfs", Status::kWarn,
                       "/sys/kernel/debug/kfd/mqds is not readable by this process (root only)",
                       "run gpreemptd as root (debugfs files are mode 0444 under a 0700 directory)"));
  else
    out.push_back(make("debugfs", Status::kWarn,
                       "debugfs is mounted but has no kfd/mqds (" + errno_text(err) + ")",
                       "use a kernel built with CONFIG_DEBUG_FS (most distribution kernels are)"));
}

void check_gpu_processes(const DoctorInputs& in, Results& out) {
  discovery::SystemRoots roots;
  roots.proc = in.files.path("/proc");
  roots.kfd_sysfs = in.files.path("/sys/class/kfd/kfd");
  roots.kfd_device = in.kfd.device;  // fds point at the device itself, not at a fake tree
  std::vector<discovery::ProcessInfo> procs;
  try {
    procs = discovery::gpu_processes(roots);
  } catch (const std::exception& e) {
    out.push_back(make("rocm_user_space", Status::kWarn, std::string("cannot list GPU processes: ") + e.what(),
                       "run doctor as root"));
    return;
  }
  std::size_t seen = 0;
  for (const auto& p : procs) {
    const std::string dir = "/proc/" + std::to_string(p.pid);
    if (!in.files.exists(dir)) continue;  // exited since the KFD listed it
    if (in.self_pid && p.pid == *in.self_pid) continue;
    ++seen;
    std::string who = "pid " + std::to_string(p.pid);
    if (!p.cmdline.empty()) who += " (" + p.cmdline.front() + ")";
    if (p.nspid.size() > 1) {
      who += ", in a container: pid " + std::to_string(p.nspid.back()) + " in its own PID namespace";
      if (p.container_id) who += ", container " + p.container_id->substr(0, 12);
    }
    int err = 0;
    const auto maps = in.files.read(dir + "/maps", &err);
    CheckResult r;
    r.id = "rocm_user_space";
    r.pid = p.pid;
    if (!maps) {
      r.status = Status::kWarn;
      r.summary = who + ": cannot read its maps (" + errno_text(err) + ")";
      r.fix = "run doctor as root to see every process's ROCm version";
    } else if (auto rocr = rocr_from_maps(*maps); !rocr) {
      r.status = Status::kWarn;
      r.summary = who + ": no libhsa-runtime64 mapped: not a ROCm runtime process (a direct KFD "
                        "client, e.g. a simulated workload), so its runtime version cannot be told";
      r.fix = "make sure the process calls RUNTIME_ENABLE before its first queue, as ROCm >= 5.7 does";
    } else if (auto ok = rocr->supports_runtime_enable(); ok == true) {
      r.status = Status::kPass;
      r.summary = who + ": ROCm " + rocr->describe() + " (" + rocr->library + ")";
    } else if (ok == false) {
      r.status = Status::kFail;
      r.summary = who + ": ROCm " + rocr->describe() + " (" + rocr->library +
                  ") enables its runtime through the pre-upstream ABI: it cannot be suspended on "
                  "any kernel";
      r.fix = "run the workload on ROCm >= 5.7 user space (e.g. a ROCm 6 container image)";
    } else {
      r.status = Status::kWarn;
      r.summary = who + ": ROCm version unknown (" + rocr->library + ")";
      r.fix = "make sure the process's ROCm is >= 5.7 (bundled or renamed runtimes do not say)";
    }
    out.push_back(std::move(r));
  }
  if (seen == 0)
    out.push_back(make("rocm_user_space", Status::kPass,
                       "no GPU process is running now; run doctor again while the workloads run to "
                       "check their ROCm versions and containers"));
}

using Check = void (*)(const DoctorInputs&, Results&);
constexpr Check kChecks[] = {
    check_kfd_device,    check_kfd_version,      check_debug_trap,     check_scheduler,
    check_cwsr,          check_preemption_timeout, check_kernel,       check_ptrace_scope,
    check_cap_sys_ptrace, check_pid_namespace,   check_debugfs,        check_gpu_processes,
};

}  // namespace

std::vector<CheckResult> run_checks(const DoctorInputs& in) {
  Results out;
  for (Check c : kChecks) c(in, out);
  if (!in.config_path.empty() || in.daemon)
    out.push_back(check_config_trust(in.config_path, in.daemon ? &*in.daemon : nullptr));
  return out;
}

}  // namespace gpreempt::doctor
