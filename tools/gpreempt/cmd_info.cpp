// `gpreempt info`: what this machine offers — KFD ioctl version, whether the debug-trap API that
// suspend/resume needs is there, and the GPUs of the KFD topology.
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "discovery/product_name.h"
#include "common/error.h"
#include "kfd/driver.h"
#include "kfd/dbg_trap.h"
#include "discovery/topology.h"
#include "kfd/version.h"

namespace gpreempt::cli {

namespace {

struct InfoOptions {
  std::string device = "/dev/kfd";
  std::string topology = discovery::kTopologyRoot;
  std::string sched_policy_file = "/sys/module/amdgpu/parameters/sched_policy";
};

// What a user needs to run suspend/resume at all; named wherever it is missing.
constexpr const char* kMinimumStack =
    "Linux >= 6.5 (or AMD's amdgpu-dkms driver) with ROCm >= 5.7 user space";

// amdgpu.sched_policy as the module exports it (0 HWS, 1 HWS without oversubscription, 2 no HWS);
// nullopt when the file is absent (amdgpu not loaded, or the simulator, which has no /sys/module).
std::optional<int> read_sched_policy(const std::string& path) {
  std::ifstream in(path);
  int v = 0;
  if (in >> v) return v;
  return std::nullopt;
}

void run_info(const Globals& g, const InfoOptions& o) {
  nlohmann::json j;
  std::ostringstream out;
  bool ok = true;
  std::string problem;
  // Why suspend/resume cannot work here, and what to do about it (empty: available).
  std::string reason, fix;

  j["kfd"]["path"] = o.device;
  const auto policy = read_sched_policy(o.sched_policy_file);
  j["kfd"]["sched_policy"] = policy ? nlohmann::json(*policy) : nlohmann::json();
  j["kfd"]["hws"] = nullptr;
  try {
    auto driver = kfd::open_linux_driver(o.device);
    kfd::Version v;
    long r = kfd::get_version_retry(*driver, v);
    if (r < 0) throw Error(static_cast<int>(-r), "GET_VERSION failed: " + errno_text(static_cast<int>(-r)));
    const bool supported = kfd::version_supported(v);
    j["kfd"]["version"] = kfd::to_string(v);
    j["kfd"]["major"] = v.major;
    j["kfd"]["minor"] = v.minor;
    j["kfd"]["debug_trap_api"] = supported;
    out << "KFD " << o.device << ": ioctl interface " << kfd::to_string(v) << "\n";
    std::optional<bool> hws;
    if (supported) hws = kfd::probe_hws(*driver);
    if (policy == 2) hws = false;
    j["kfd"]["hws"] = hws ? nlohmann::json(*hws) : nlohmann::json();
    if (!supported) {
      reason = "the KFD ioctl interface is " + kfd::to_string(v) +
               (v.major == 1 ? ", older than 1.13, the first with the debug-trap API (SUSPEND/RESUME_QUEUES)"
                             : ", a major version gpreempt does not know (it needs >= 1.13 and < 2.0)");
      fix = std::string("run ") + kMinimumStack;
    } else if (hws == false) {
      reason = "the GPU is not scheduled by the hardware scheduler (amdgpu.sched_policy=2), and the KFD "
               "refuses every debug-trap call without it";
      fix = "load amdgpu with sched_policy=0 (the default): remove amdgpu.sched_policy=2 from the kernel "
            "command line or /etc/modprobe.d and reboot";
    }
  } catch (const Error& e) {
    ok = false;
    problem = e.what();
    j["kfd"]["error"] = json_conventions::error_object(json_conventions::errno_name(e.code()), e.code(), e.what());
    out << "KFD " << o.device << ": " << e.what() << "\n";
    reason = std::string("the KFD device cannot be used: ") + e.what();
    fix = std::string("check that amdgpu is loaded and you may open ") + o.device +
          " (the 'render' group); suspend/resume need " + kMinimumStack;
  }
  const bool available = reason.empty();
  j["suspend_resume"] = {{"available", available},
                         {"reason", available ? nlohmann::json() : nlohmann::json(reason)},
                         {"fix", available ? nlohmann::json() : nlohmann::json(fix)},
                         {"minimum_stack", kMinimumStack}};
  if (available) {
    out << "Suspend/resume (debug-trap SUSPEND/RESUME_QUEUES): available\n";
  } else {
    out << "Suspend/resume (debug-trap SUSPEND/RESUME_QUEUES): NOT available — " << reason << ".\n"
        << "  Fix: " << fix << ".\n";
    ok = false;
    if (problem.empty()) problem = "suspend/resume not available: " + reason;
  }

  j["topology"]["path"] = o.topology;
  j["gpus"] = nlohmann::json::array();
  try {
    auto gpus = discovery::read_gpu_nodes(o.topology);
    std::vector<std::vector<std::string>> rows;
    for (const auto& gpu : gpus) {
      const auto product = discovery::product_name(gpu.gfx_target_version, gpu.device_id);
      j["gpus"].push_back({{"node", gpu.node},
                           {"gpu_id", gpu.gpu_id},
                           {"name", gpu.name},
                           {"gfx_target_version", gpu.gfx_target_version},
                           {"gfx_target", gpu.gfx_name()},
                           {"device_id", gpu.device_id},
                           {"product", product ? nlohmann::json(product->name) : nlohmann::json()},
                           {"product_source", product ? nlohmann::json(product->source) : nlohmann::json()},
                           {"simd_count", gpu.simd_count},
                           {"num_xcc", gpu.num_xcc},
                           {"max_engine_clk_mhz", gpu.max_engine_clk_fcompute},
                           {"debug_trap_supported", gpu.debug_trap_supported()}});
      char dev[16];
      std::snprintf(dev, sizeof dev, "0x%04x", gpu.device_id);
      rows.push_back({std::to_string(gpu.node), gpu_id_text(gpu.gpu_id), gpu.gfx_name(),
                      product ? product->name : std::string("unknown (device ") + dev + ")",
                      std::to_string(gpu.simd_count), std::to_string(gpu.num_xcc),
                      std::to_string(gpu.max_engine_clk_fcompute),
                      gpu.debug_trap_supported() ? "yes" : "no"});
    }
    out << "\n" << gpus.size() << " GPU(s) in " << o.topology << ":\n";
    if (!rows.empty())
      out << table({"NODE", "GPU_ID", "GFX", "PRODUCT", "SIMDS", "XCCS", "CLOCK_MHZ", "DEBUG_TRAP"},
                   rows);
  } catch (const Error& e) {
    ok = false;
    if (problem.empty()) problem = e.what();
    j["topology"]["error"] = json_conventions::error_object(json_conventions::errno_name(e.code()), e.code(), e.what());
    out << "\nTopology: " << e.what() << "\n";
  }
  j["ok"] = ok;
  if (!ok) j["error"] = json_conventions::error_object("failed", std::nullopt, problem);
  emit(g, out.str(), j);
  if (!ok) {
    // Already printed in full; exit 1 without repeating the document.
    exit_partial("info: " + problem);
  }
}

}  // namespace

void register_info_commands(CLI::App& app, Globals& globals) {
  auto opts = std::make_shared<InfoOptions>();
  CLI::App* info = add_command(
      app, globals, "info", "Show the KFD version, whether suspend/resume can work, and the GPUs",
      "Reads /dev/kfd (GET_VERSION, and one harmless DBG_TRAP on pid 0 that tells whether the\n"
      "hardware scheduler runs the queues), amdgpu's sched_policy module parameter and the KFD\n"
      "topology; needs no privileges beyond access to /dev/kfd (the 'render' group).\n"
      "Suspend/resume need KFD ioctl >= 1.13 and the hardware scheduler (sched_policy 0 or 1):\n"
      "Linux >= 6.5 (or AMD's amdgpu-dkms driver) with ROCm >= 5.7 user space. When they are not\n"
      "available the output says why and what to change. GPUs are shown by gfx target and product\n"
      "name (from the PCI device id: MI300-class topology names every node \"ip discovery\").\n"
      "Examples:\n  gpreempt info\n  gpreempt info --json | jq .suspend_resume\n"
      "  kfdsim run --sched-policy 2 -- gpreempt info     (a machine without HWS)\n"
      "Exit codes: 0 suspend/resume available, 1 not available (reason printed) or /dev/kfd or\n"
      "topology unusable, 2 usage.");
  info->add_option("--device", opts->device, "KFD device node")->capture_default_str();
  info->add_option("--topology", opts->topology, "KFD topology directory")->capture_default_str();
  info->add_option("--sched-policy-file", opts->sched_policy_file,
                   "amdgpu's sched_policy module parameter")
      ->capture_default_str();
  info->callback([&globals, opts] { run_info(globals, *opts); });
}

}  // namespace gpreempt::cli
