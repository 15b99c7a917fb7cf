// Every doctor check over a fake /proc and /sys tree and a fake KFD probe: a healthy node passes,
// and each way a node can be wrong fails (or warns) that check, with a fix.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "doctor/doctor.h"

namespace gpreempt::doctor {
namespace {

namespace fs = std::filesystem;

constexpr const char* kProperties =
    "cpu_cores_count 0\nsimd_count 304\nmem_banks_count 1\ncaches_count 0\nio_links_count 0\n"
    "p2p_links_count 0\ncpu_core_id_base 0\nsimd_id_base 2147487744\nmax_waves_per_simd 8\n"
    "lds_size_in_kb 64\ngds_size_in_kb 0\nnum_gws 64\nwave_front_size 64\narray_count 32\n"
    "simd_arrays_per_engine 1\ncu_per_simd_array 10\nsimd_per_cu 4\nmax_slots_scratch_cu 32\n"
    "gfx_target_version 90402\nvendor_id 4098\ndevice_id 29858\nlocation_id 1024\ndomain 0\n"
    "drm_render_minor 128\nhive_id 0\nnum_sdma_engines 2\nnum_sdma_xgmi_engines 6\n"
    "num_sdma_queues_per_engine 8\nnum_cp_queues 24\nmax_engine_clk_fcompute 2100\n"
    "local_mem_size 0\nfw_version 177\ncapability 746046080\ncapability2 0\ndebug_prop 1495\n"
    "sdma_fw_version 19\nunique_id 1\nnum_xcc 4\nmax_engine_clk_ccompute 2000\n";

// A healthy MI308X node: every check passes. Each test breaks one thing.
class FakeNode : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("gpreempt_doctor_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    write("/proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
    write("/proc/sys/kernel/yama/ptrace_scope", "1\n");
    // CapEff of root: every capability, CAP_SYS_PTRACE (19) included.
    write("/proc/self/status", "Name:\tgpreempt\nNSpid:\t4000\nCapEff:\t000001ffffffffff\n");
    write("/proc/mounts", "sysfs /sys sysfs rw 0 0\ndebugfs /sys/kernel/debug debugfs rw 0 0\n");
    write("/sys/kernel/debug/kfd/mqds", "Process 1 PASID 1:\n");
    write("/sys/module/amdgpu/parameters/sched_policy", "0\n");
    write("/sys/module/amdgpu/parameters/cwsr_enable", "1\n");
    write("/sys/module/amdgpu/parameters/queue_preemption_timeout_ms", "9000\n");
    write("/sys/class/kfd/kfd/topology/nodes/0/gpu_id", "0\n");
    write("/sys/class/kfd/kfd/topology/nodes/1/gpu_id", "63420\n");
    write("/sys/class/kfd/kfd/topology/nodes/1/name", "ip discovery\n");
    write("/sys/class/kfd/kfd/topology/nodes/1/properties", kProperties);
    probe_.opened = true;
    probe_.major = 1;
    probe_.minor = 16;
    probe_.hws = true;
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& path, const std::string& text) {
    const fs::path p = root_.string() + path;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  void remove(const std::string& path) { fs::remove_all(root_.string() + path); }

  // A GPU process: /proc/<pid> with its maps, and its KFD sysfs directory.
  void gpu_process(int pid, const std::string& library, const std::string& nspid = "") {
    const std::string dir = "/proc/" + std::to_string(pid);
    write(dir + "/status", "Name:\tpython3\nNSpid:\t" + (nspid.empty() ? std::to_string(pid) : nspid) + "\n");
    write(dir + "/cmdline", std::string("python3\0serve.py\0", 17));
    write(dir + "/cgroup",
          "0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-"
          "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope\n");
    std::string maps = "00400000-00401000 r-xp 00000000 08:01 1 /usr/bin/python3.11\n";
    if (!library.empty()) maps += "7f00-7f01 r-xp 00000000 08:01 2                 " + library + "\n";
    write(dir + "/maps", maps);
    write("/sys/class/kfd/kfd/proc/" + std::to_string(pid) + "/pasid", "0\n");
  }

  std::vector<CheckResult> run() {
    DoctorInputs in{SystemFiles(root_.string()), probe_, false, std::nullopt, "", std::nullopt};
    return run_checks(in);
  }
  // The one result of `id` (the per-process check: the one for `pid`).
  CheckResult check(const std::string& id, std::optional<int> pid = std::nullopt) {
    const auto all = run();
    for (const auto& r : all)
      if (r.id == id && (!pid || r.pid == pid)) return r;
    ADD_FAILURE() << "no check " << id;
    return {};
  }

  fs::path root_;
  KfdProbe probe_;
};

TEST_F(FakeNode, HealthyNodePassesEveryCheck) {
  gpu_process(4242, "/opt/rocm-6.3.1/lib/libhsa-runtime64.so.1.14.60301");
  const auto results = run();
  EXPECT_FALSE(any_failed(results));
  std::vector<std::string> ids;
  for (const auto& r : results) {
    EXPECT_EQ(r.status, Status::kPass) << r.id << ": " << r.summary;
    EXPECT_TRUE(r.fix.empty()) << r.id;
    ids.push_back(r.id);
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"kfd_device", "kfd_ioctl_version", "debug_trap", "scheduler",
                                           "cwsr", "queue_preemption_timeout", "kernel", "ptrace_scope",
                                           "cap_sys_ptrace", "pid_namespace", "debugfs",
                                           "rocm_user_space"}));
  EXPECT_NE(check("rocm_user_space", 4242).summary.find("ROCm 6.3.1"), std::string::npos);
}

TEST_F(FakeNode, NoKfdDeviceFailsWithTheFix) {
  probe_ = KfdProbe{};
  probe_.open_errno = ENOENT;
  auto r = check("kfd_device");
  EXPECT_EQ(r.status, Status::kFail);
  EXPECT_NE(r.fix.find("modprobe amdgpu"), std::string::npos) << r.fix;
  EXPECT_NE(r.fix.find("kfdsim run -- gpreempt doctor"), std::string::npos) << r.fix;
  EXPECT_EQ(check("kfd_ioctl_version").status, Status::kSkip);
  EXPECT_EQ(check("debug_trap").status, Status::kSkip);
}

TEST_F(FakeNode, UnreadableKfdDeviceNamesTheGroup) {
  probe_ = KfdProbe{};
  probe_.open_errno = EACCES;
  auto r = check("kfd_device");
  EXPECT_EQ(r.status, Status::kFail);
  EXPECT_NE(r.fix.find("render"), std::string::npos) << r.fix;
}

TEST_F(FakeNode, OldKfdFailsWithTheMinimumStack) {
  probe_.minor = 12;
  probe_.hws.reset();
  auto r = check("kfd_ioctl_version");
  EXPECT_EQ(r.status, Status::kFail);
  EXPECT_NE(r.summary.find("1.12"), std::string::npos);
  EXPECT_NE(r.fix.find(kMinimumStack), std::string::npos);
  EXPECT_EQ(check("debug_trap").status, Status::kSkip);
}

TEST_F(FakeNode, NoHwsFailsSchedulerAndDebugTrap) {
  write("/sys/module/amdgpu/parameters/sched_policy", "2\n");
  probe_.hws = false;
  auto r = check("scheduler");
  EXPECT_EQ(r.status, Status::kFail);
  EXPECT_NE(r.summary.find("sched_policy=2"), std::string::npos) << r.summary;
  EXPECT_NE(r.fix.find("sched_policy=0"), std::string::npos);
  EXPECT_EQ(check("debug_trap").status, Status::kFail);
}

TEST_F(FakeNode, SchedulerProbedWhenTheParameterIsAbsent) {
  remove("/sys/module/amdgpu/parameters/sched_policy");
  EXPECT_EQ(check("scheduler").status, Status::kPass);
  probe_.hws = false;
  EXPECT_EQ(check("scheduler").status, Status::kFail);
}

TEST_F(FakeNode, MesGpuWarns) {
  std::string props = kProperties;
  props.replace(props.find("gfx_target_version 90402"), 24, "gfx_target_version 110000");
  write("/sys/class/kfd/kfd/topology/nodes/1/properties", props);
  auto r = check("scheduler");
  EXPECT_EQ(r.status, Status::kWarn);
  EXPECT_NE(r.summary.find("MES"), std::string::npos);
}

TEST_F(FakeNode, GpuWithoutDebugTrapCapabilityFails) {
  std::string props = kProperties;
  props.replace(props.find("capability 746046080"), 20, "capability 0");
  write("/sys/class/kfd/kfd/topology/nodes/1/properties", props);
  auto r = check("debug_trap");
  EXPECT_EQ(r.status, Status::kFail);
  EXPECT_NE(r.summary.find("63420"), std::string::npos) << r.summary;
}

// The GPUs are named as people know them, from the PCI device id: the topology's own name is the
// ASIC string "ip discovery" on every MI300. An id outside the built-in table and amdgpu.ids is
// named by its gfx target and the id.
TEST_F(FakeNode, DebugTrapPassNamesTheProductNotTheTopologyAsicName) {
  auto r = check("debug_trap");
  EXPECT_EQ(r.status, Status::kPass);
  EXPECT_NE(r.summary.find("(AMD Instinct MI308X (gfx942))"), std::string::npos) << r.summary;
  EXPECT_EQ(r.summary.find("ip discovery"), std::string::npos) << r.summary;
  std::string props = kProperties;
  props.replace(props.find("device_id 29858"), 15, "device_id 4660");
  write("/sys/class/kfd/kfd/topology/nodes/1/properties", props);
  write("/usr/share/libdrm/amdgpu.ids", "# 1.0.0\n74A2,\t00,\tAMD Instinct MI308X\n");
  r = check("debug_trap");
  EXPECT_NE(r.summary.find("(gfx942 GPU (device 0x1234))"), std::string::npos) << r.summary;
  write("/usr/share/libdrm/amdgpu.ids", "# 1.0.0\n1234,\t00,\tAMD Test Part\n");
  r = check("debug_trap");
  EXPECT_NE(r.summary.find("(AMD Test Part (gfx942))"), std::string::npos) << r.summary;
}

TEST_F(FakeNode, CwsrDisabledFails) {
  write("/sys/module/amdgpu/parameters/cwsr_enable", "0\n");
  auto r = check("cwsr");
  EXPECT_EQ(r.status, Status::kFail);
  EXPECT_NE(r.fix.find("cwsr_enable=1"), std::string::npos);
}

TEST_F(FakeNode, ShortPreemptionTimeoutWarns) {
  write("/sys/module/amdgpu/parameters/queue_preemption_timeout_ms", "200\n");
  auto r = check("queue_preemption_timeout");
  EXPECT_EQ(r.status, Status::kWarn);
  EXPECT_NE(r.summary.find("=200"), std::string::npos);
}

TEST_F(FakeNode, OldKernel) {
  write("/proc/sys/kernel/osrelease", "5.15.0-91-generic\n");
  probe_.minor = 12;
  auto r = check("kernel");
  EXPECT_EQ(r.status, Status::kFail);
  EXPECT_NE(r.fix.find(kMinimumStack), std::string::npos);
  // AMD's DKMS driver brings the debug-trap API to old kernels.
  write("/sys/module/amdgpu/version", "6.12.12\n");
  r = check("kernel");
  EXPECT_EQ(r.status, Status::kPass);
  EXPECT_NE(r.summary.find("amdgpu-dkms driver 6.12.12"), std::string::npos) << r.summary;
}

TEST_F(FakeNode, PtraceScope) {
  write("/proc/sys/kernel/yama/ptrace_scope", "3\n");
  EXPECT_EQ(check("ptrace_scope").status, Status::kFail);
  write("/proc/sys/kernel/yama/ptrace_scope", "2\n");
  EXPECT_EQ(check("ptrace_scope").status, Status::kPass);
  write("/proc/self/status", "Name:\tgpreempt\nNSpid:\t4000\nCapEff:\t0000000000000000\n");
  EXPECT_EQ(check("ptrace_scope").status, Status::kFail);
  remove("/proc/sys/kernel/yama");
  EXPECT_EQ(check("ptrace_scope").status, Status::kPass);
}

TEST_F(FakeNode, MissingCapSysPtraceFails) {
  // Every capability but CAP_SYS_PTRACE (bit 19).
  write("/proc/self/status", "Name:\tgpreempt\nNSpid:\t4000\nCapEff:\t000001fffff7ffff\n");
  auto r = check("cap_sys_ptrace");
  EXPECT_EQ(r.status, Status::kFail);
  EXPECT_NE(r.fix.find("CAP_SYS_PTRACE"), std::string::npos);
}

TEST_F(FakeNode, ChildPidNamespaceFails) {
  write("/proc/self/status", "Name:\tgpreempt\nNSpid:\t4000\t7\nCapEff:\t000001ffffffffff\n");
  auto r = check("pid_namespace");
  EXPECT_EQ(r.status, Status::kFail);
  EXPECT_NE(r.fix.find("hostPID: true"), std::string::npos);
}

TEST_F(FakeNode, DebugfsNotMountedWarns) {
  remove("/sys/kernel/debug");
  write("/proc/mounts", "sysfs /sys sysfs rw 0 0\n");
  auto r = check("debugfs");
  EXPECT_EQ(r.status, Status::kWarn);
  EXPECT_NE(r.summary.find("not mounted"), std::string::npos);
  EXPECT_NE(r.fix.find("mount -t debugfs"), std::string::npos);
  write("/proc/mounts", "debugfs /sys/kernel/debug debugfs rw 0 0\n");
  EXPECT_NE(check("debugfs").summary.find("no kfd/mqds"), std::string::npos);
}

TEST_F(FakeNode, OldRocmUserSpaceFails) {
  gpu_process(100, "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1.5.0");        // Debian 12
  gpu_process(101, "/opt/rocm-5.6.1/lib/libhsa-runtime64.so.1.10.50601");          // ROCm 5.6.1
  gpu_process(102, "/opt/rocm-5.7.0/lib/libhsa-runtime64.so.1.11.50700");          // ROCm 5.7.0
  gpu_process(103, "/venv/lib/python3.11/site-packages/torch/lib/libhsa-runtime64.so");
  gpu_process(104, "");
  EXPECT_EQ(check("rocm_user_space", 100).status, Status::kFail);
  auto r = check("rocm_user_space", 101);
  EXPECT_EQ(r.status, Status::kFail);
  EXPECT_NE(r.summary.find("5.6.1"), std::string::npos);
  EXPECT_NE(r.fix.find("ROCm >= 5.7"), std::string::npos);
  EXPECT_EQ(check("rocm_user_space", 102).status, Status::kPass);
  EXPECT_EQ(check("rocm_user_space", 103).status, Status::kWarn);
  r = check("rocm_user_space", 104);
  EXPECT_EQ(r.status, Status::kWarn);
  EXPECT_NE(r.summary.find("no libhsa-runtime64"), std::string::npos);
  EXPECT_TRUE(any_failed(run()));
}

TEST_F(FakeNode, ProcessInAContainerIsNamed) {
  gpu_process(5000, "/opt/rocm-6.2.0/lib/libhsa-runtime64.so.1.14.60200", "5000\t1");
  auto r = check("rocm_user_space", 5000);
  EXPECT_EQ(r.status, Status::kPass);
  EXPECT_NE(r.summary.find("in a container: pid 1 in its own PID namespace, container 0123456789ab"),
            std::string::npos)
      << r.summary;
}

TEST_F(FakeNode, DoctorLeavesItselfOut) {
  gpu_process(4000, "");
  DoctorInputs in{SystemFiles(root_.string()), probe_, false, 4000, "", std::nullopt};
  for (const auto& r : run_checks(in)) EXPECT_NE(r.pid, std::optional<int>(4000));
}

TEST_F(FakeNode, NoGpuProcessPasses) {
  auto r = check("rocm_user_space");
  EXPECT_EQ(r.status, Status::kPass);
  EXPECT_NE(r.summary.find("no GPU process"), std::string::npos);
}

}  // namespace
}  // namespace gpreempt::doctor
