// `gpreempt doctor` as a user runs it: off the simulator with no KFD (it fails and says how to fix
// it), and under `kfdsim run` (a simulated MI308X passes; no HWS or an old KFD fails).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace gt = gpreempt::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

fs::path bin_dir() { return fs::path(gt::gpreempt_exe()).parent_path(); }

gt::CliResult on_machine(const std::string& kfdsim_options, const std::string& script) {
  const fs::path machine = fs::temp_directory_path() / ("gpreempt_doctor_m_" + std::to_string(::getpid()));
  const std::string env = "WL=" + (bin_dir() / "gpreempt-workload").string() + " GP=" + gt::gpreempt_exe();
  auto r = gt::run_shell("KFDSIM_DIR=" + machine.string() + " " + env + " " +
                         (bin_dir() / "kfdsim").string() + " run --hardware instant " + kfdsim_options +
                         " -- sh -c '" + script + "'");
  fs::remove_all(machine);
  return r;
}

// CAP_SYS_PTRACE (bit 19) in this process's effective set, as doctor's cap_sys_ptrace check reads
// it: root has it, an ordinary user (CI may run as one) does not.
bool has_cap_sys_ptrace() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("CapEff:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> 19) & 1;
  return false;
}

json check(const json& doc, const std::string& id) {
  for (const auto& c : doc.at("checks"))
    if (c.at("id") == id) return c;
  ADD_FAILURE() << "no check " << id << " in " << doc.dump();
  return json::object();
}

}  // namespace

TEST(DoctorCli, WithoutKfdItFailsWithTheFix) {
  auto r = gt::run_gpreempt("doctor --device /nonexistent/kfd");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("Minimum stack: Linux >= 6.5 (or AMD's amdgpu-dkms driver) with ROCm >= 5.7 user space"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("FAIL  kfd_device"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fix: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NOT ready"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\033["), std::string::npos) << "colour on a pipe";
  EXPECT_NE(r.err.find("check(s) failed"), std::string::npos) << r.err;

  r = gt::run_gpreempt("doctor --device /nonexistent/kfd --json");
  EXPECT_EQ(r.exit_code, 1);
  const json doc = json::parse(r.out);
  EXPECT_EQ(nlohmann::ordered_json::parse(r.out).begin().key(), "schema_version");
  EXPECT_EQ(doc.at("ok"), false);
  EXPECT_EQ(doc.at("error").at("code"), "failed");
  EXPECT_EQ(check(doc, "kfd_device").at("status"), "fail");
  EXPECT_TRUE(check(doc, "kfd_device").at("fix").is_string());
  EXPECT_EQ(doc.at("counts").at("fail").get<int>() >= 1, true);
}

TEST(DoctorCli, SimulatedMachinePasses) {
  // A workload with a queue is running: doctor lists it (the simulated runtime maps no ROCr).
  auto r = on_machine("",
                      "$WL offline --preset toy-offline --duration 60 >/dev/null & "
                      "i=0; until $GP queues --pid $! --sysfs >/dev/null 2>&1; do i=$((i+1)); [ $i -gt 3000 ] && break; done; "
                      "$GP doctor --json; rc=$?; kill $!; wait; exit $rc");
  // Every check passes but cap_sys_ptrace, which only root (or the capability) passes.
  const bool privileged = has_cap_sys_ptrace();
  ASSERT_EQ(r.exit_code, privileged ? 0 : 1) << r.out << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc.at("simulated"), true);
  EXPECT_EQ(doc.at("ok"), privileged);
  EXPECT_EQ(check(doc, "cap_sys_ptrace").at("status"), privileged ? "pass" : "fail");
  EXPECT_EQ(doc.at("counts").at("fail"), privileged ? 0 : 1) << doc.dump();
  for (const char* id : {"kfd_device", "kfd_ioctl_version", "debug_trap", "scheduler", "debugfs"})
    EXPECT_EQ(check(doc, id).at("status"), "pass") << id << ": " << check(doc, id).dump();
  // The simulated MI308X is named as a real one would be (its topology name is "ip discovery").
  EXPECT_NE(check(doc, "debug_trap").at("summary").get<std::string>().find("AMD Instinct MI308X (gfx942)"),
            std::string::npos)
      << check(doc, "debug_trap").dump();
  const json p = check(doc, "rocm_user_space");
  EXPECT_EQ(p.at("status"), "warn") << p.dump();
  EXPECT_TRUE(p.at("pid").is_number_integer());
  EXPECT_NE(p.at("summary").get<std::string>().find("no libhsa-runtime64"), std::string::npos);
}

TEST(DoctorCli, SimulatedMachineWithoutHwsOrWithOldKfdFails) {
  auto r = on_machine("--sched-policy 2", "$GP doctor --json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  json doc = json::parse(r.out);
  EXPECT_EQ(check(doc, "scheduler").at("status"), "fail");
  EXPECT_EQ(check(doc, "debug_trap").at("status"), "fail");

  r = on_machine("--kfd-minor 12", "$GP doctor");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL  kfd_ioctl_version         KFD ioctl 1.12"), std::string::npos) << r.out;
}
