// The transparent trigger against an unmodified online workload on the simulated GPU: the probe
// (gpreempt-transparent-probe, the trigger alone) finds the workload's queues in debugfs mqds,
// reads their pointers with process_vm_readv, and reports requests; nobody ptrace-attaches the
// workload. Polls with deadlines only.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "common/proc_status.h"
#include "common/text_file.h"
#include "sim_harness.h"

namespace gpreempt::testing {
namespace {

using namespace std::chrono_literals;

// The next probe line whose "event" is `kind` (and pid, when given); nullopt on EOF or timeout.
std::optional<nlohmann::json> next_event(Child& probe, const std::string& kind, int pid,
                                         std::chrono::milliseconds timeout = 30s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto l = probe.line(std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now()));
    if (!l) return std::nullopt;
    auto j = nlohmann::json::parse(*l, nullptr, false);
    if (j.is_discarded()) continue;
    if (j.value("event", "") == kind && (pid == 0 || j.value("pid", 0) == pid)) return j;
  }
  return std::nullopt;
}

std::string status_field(int pid, const std::string& name) {
  const auto text = read_text_file("/proc/" + std::to_string(pid) + "/status");
  if (!text) return {};
  return std::string(proc_status_field(*text, name).value_or(""));
}

TEST(TransparentSim, RequestsOfAnUnmodifiedWorkloadAreSeenWithoutPtrace) {
  Machine m({"--hardware", "gpu"});
  // 20 requests/s of 3 kernels for 3 s: idle gaps of ~50 ms between requests.
  Child online({bin("gpreempt-workload").string(), "online", "--preset", "toy-online", "--duration",
                "3", "--rate", "20", "--arrival", "fixed"},
               m.env());
  const int wpid = online.pid();
  // Watched before its runtime created any queue: the queue check finds them later.
  Child probe({bin("gpreempt-transparent-probe").string(), "--pid", std::to_string(wpid),
               "--until-unwatched"},
              m.env());
  auto watching = next_event(probe, "watching", wpid);
  ASSERT_TRUE(watching) << probe.stderr_text();

  auto started = next_event(probe, "request_started", wpid);
  ASSERT_TRUE(started) << "no request seen; probe stderr: " << probe.stderr_text();
  EXPECT_EQ((*started)["source"], "transparent");
  auto finished = next_event(probe, "request_finished", wpid);
  ASSERT_TRUE(finished) << "the queues never drained; probe stderr: " << probe.stderr_text();
  EXPECT_EQ((*finished)["request"], (*started)["request"]);
  EXPECT_GE((*finished)["time_ns"].get<int64_t>(), (*started)["time_ns"].get<int64_t>());
  // A second request: the process went idle and busy again.
  auto again = next_event(probe, "request_started", wpid);
  ASSERT_TRUE(again);
  EXPECT_NE((*again)["request"], (*started)["request"]);

  // Nobody traces the workload: no ptrace attach happened.
  EXPECT_EQ(status_field(wpid, "TracerPid"), "0");

  // The workload ends (3 s of arrivals): the probe unwatches it and exits by itself.
  auto gone = next_event(probe, "unwatched", wpid);
  ASSERT_TRUE(gone) << probe.stderr_text();
  EXPECT_NE((*gone)["reason"].get<std::string>().find("gone"), std::string::npos)
      << (*gone)["reason"];
  auto summary = next_event(probe, "summary", 0);
  ASSERT_TRUE(summary);
  EXPECT_GE((*summary)["requests"].get<uint64_t>(), 2u);
  EXPECT_GT((*summary)["samples"].get<uint64_t>(), 0u);
  EXPECT_EQ(probe.wait(), 0);
  EXPECT_EQ(online.wait(), 0) << online.stderr_text();
}

TEST(TransparentSim, AKilledProcessIsUnwatched) {
  Machine m({"--hardware", "gpu"});
  Child online({bin("gpreempt-workload").string(), "online", "--preset", "toy-online", "--duration",
                "60", "--rate", "20", "--arrival", "fixed"},
               m.env());
  const int wpid = online.pid();
  Child probe({bin("gpreempt-transparent-probe").string(), "--pid", std::to_string(wpid),
               "--until-unwatched"},
              m.env());
  ASSERT_TRUE(next_event(probe, "request_started", wpid)) << probe.stderr_text();
  EXPECT_EQ(status_field(wpid, "TracerPid"), "0");
  online.kill(SIGKILL);
  EXPECT_EQ(online.wait(), 128 + SIGKILL);  // reaped: the pid is gone
  auto gone = next_event(probe, "unwatched", wpid);
  ASSERT_TRUE(gone) << probe.stderr_text();
  EXPECT_EQ(probe.wait(), 0);
}

TEST(TransparentSim, ProbeRefusesAnIntervalOutsideTheRange) {
  Machine m;
  auto r = run({bin("gpreempt-transparent-probe").string(), "--pid", "1", "--interval-us", "50"},
               m.env());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("100..500 us"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpreempt::testing
