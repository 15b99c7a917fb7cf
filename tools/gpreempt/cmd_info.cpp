// `gpreempt info`: what this machine offers — KFD ioctl version, whether the debug-trap API that
// suspend/resume needs is there, and the GPUs of the KFD topology.
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "cli.h"
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
};

void run_info(const Globals& g, const InfoOptions& o) {
  nlohmann::json j;
  std::ostringstream out;
  bool ok = true;
  std::string problem;

  j["kfd"]["path"] = o.device;
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
    out << "KFD " << o.device << ": ioctl interface " << kfd::to_string(v) << "\n"
        << "Debug-trap API (SUSPEND/RESUME_QUEUES): "
        << (supported ? "available (needs >= 1.13 and < 2.0)"
                      : "NOT available — needs ioctl >= 1.13 and < 2.0")
        << "\n";
    if (!supported) {
      ok = false;
      problem = "KFD ioctl " + kfd::to_string(v) + " has no usable debug-trap API (needs >= 1.13, < 2.0)";
    }
  } catch (const Error& e) {
    ok = false;
    problem = e.what();
    j["kfd"]["error"] = e.what();
    out << "KFD " << o.device << ": " << e.what() << "\n";
  }

  j["gpus"] = nlohmann::json::array();
  try {
    auto gpus = discovery::read_gpu_nodes(o.topology);
    std::vector<std::vector<std::string>> rows;
    for (const auto& gpu : gpus) {
      j["gpus"].push_back({{"node", gpu.node},
                           {"gpu_id", gpu.gpu_id},
                           {"name", gpu.name},
                           {"gfx_target_version", gpu.gfx_target_version},
                           {"gfx", gpu.gfx_name()},
                           {"simd_count", gpu.simd_count},
                           {"num_xcc", gpu.num_xcc},
                           {"max_engine_clk_mhz", gpu.max_engine_clk_fcompute},
                           {"debug_trap_supported", gpu.debug_trap_supported()}});
      rows.push_back({std::to_string(gpu.node), gpu_id_text(gpu.gpu_id), gpu.name,
                      gpu.gfx_name(), std::to_string(gpu.simd_count), std::to_string(gpu.num_xcc),
                      std::to_string(gpu.max_engine_clk_fcompute),
                      gpu.debug_trap_supported() ? "yes" : "no"});
    }
    out << "\n" << gpus.size() << " GPU(s) in " << o.topology << ":\n";
    if (!rows.empty())
      out << table({"NODE", "GPU_ID", "NAME", "GFX", "SIMDS", "XCCS", "CLOCK_MHZ", "DEBUG_TRAP"},
                   rows);
  } catch (const Error& e) {
    ok = false;
    if (problem.empty()) problem = e.what();
    j["topology_error"] = e.what();
    out << "\nTopology: " << e.what() << "\n";
  }
  j["ok"] = ok;
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
      app, globals, "info", "Show the KFD version, debug-trap support and the GPUs",
      "Reads /dev/kfd (GET_VERSION) and the KFD topology in sysfs; needs no privileges beyond\n"
      "access to /dev/kfd (the 'render' group). Suspend/resume need KFD ioctl >= 1.13 (Linux 6.5+\n"
      "or a ROCm amdgpu-dkms driver) and GPUs whose DEBUG_TRAP column says yes.\n"
      "Examples:\n  gpreempt info\n  gpreempt info --json | jq .gpus\n"
      "Exit codes: 0 ok, 1 /dev/kfd or topology unusable, 2 usage.");
  info->add_option("--device", opts->device, "KFD device node")->capture_default_str();
  info->add_option("--topology", opts->topology, "KFD topology directory")->capture_default_str();
  info->callback([&globals, opts] { run_info(globals, *opts); });
}

}  // namespace gpreempt::cli
