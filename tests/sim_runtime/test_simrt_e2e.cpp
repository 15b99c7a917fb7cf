// simrt, gpreempt-workload and the GPU model end to end: real processes under the shim on a
// private kfdsimd with the "gpu" hardware model; faults observed by a real debugger client.
#include <signal.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../sim_transport/machine_fixture.h"
#include "sim/gpu/profile.h"
#include "sim/protocol/gpu_stats_query.h"
#include "sim/protocol/messages.h"
#include "support/fixtures.h"

namespace gpreempt::testing {
namespace {

std::map<std::string, std::string> gpu_env(std::map<std::string, std::string> extra = {}) {
  extra["KFDSIM_HARDWARE"] = "gpu";
  return extra;
}

std::map<std::string, std::string> read_kv(Child& c) {
  std::map<std::string, std::string> kv;
  while (auto l = c.line()) {
    const auto sp = l->find(' ');
    kv[l->substr(0, sp)] = sp == std::string::npos ? "" : l->substr(sp + 1);
    if (*l == "ok" || *l == "closed" || l->rfind("error", 0) == 0) break;
  }
  return kv;
}

nlohmann::json run_json(Machine& m, const std::vector<std::string>& argv) {
  auto c = m.spawn(argv);
  const int status = c->finish();
  const std::string out = c->rest();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status << "\n" << out;
  return nlohmann::json::parse(out);
}

std::map<std::string, std::string> faults(const char* plan, const char* timeout_ms = nullptr) {
  std::map<std::string, std::string> e{{"GPREEMPT_SIM_FAULTS", plan}};
  if (timeout_ms) e["GPREEMPT_SIM_PREEMPT_TIMEOUT_MS"] = timeout_ms;
  return e;
}

std::string workload() { return build_path("bin/gpreempt-workload").string(); }

TEST(SimrtE2E, CApiDispatchesBarriersSignalsAndWrapsTheRing) {
  Machine m(gpu_env());
  auto c = m.spawn({build_path("bin/simrt_smoke").string()});
  auto kv = read_kv(*c);
  ASSERT_TRUE(kv.count("closed")) << (kv.count("error") ? kv["error"] : "no output");
  // simrt_close destroyed the queue the program left open (the process is still alive).
  auto queues = m.queues();
  ASSERT_TRUE(queues);
  for (const auto& q : *queues) EXPECT_NE(q["pid"], c->pid()) << q.dump();
  EXPECT_EQ(kv["dispatch_after_close"], "-22");
  c->send("go");
  ASSERT_EQ(c->line(), "ok");
  EXPECT_EQ(kv["version"], "1.22");
  EXPECT_EQ(kv["queues"], "0 1");
  EXPECT_EQ(kv["barrier_order"], "1");
  EXPECT_EQ(kv["barrier_signal"], "0");
  EXPECT_EQ(kv["in_order"], "1");
  EXPECT_EQ(kv["countdown"], "0");
  EXPECT_EQ(kv["ring_wrapped"], "1");
  EXPECT_EQ(kv["bell_rung"], "1") << "the simulated GPU never rang the completion bell";
  EXPECT_EQ(kv["timeout_rc"], "-110");  // -ETIMEDOUT
  const int status = c->finish();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(SimrtE2E, OnlineWorkloadReportsLatencyJson) {
  Machine m(gpu_env());
  auto j = run_json(m, {workload(), "online", "--preset", "cnn", "--duration", "0.6", "--rate",
                        "20", "--arrival", "fixed", "--json"});
  EXPECT_EQ(j["mode"], "online");
  EXPECT_EQ(j["requests_sent"], 11);  // arrivals at 50, 100, ... 550 ms
  EXPECT_EQ(j["requests_completed"], j["requests_sent"]);
  const auto& l = j["latency_ms"];
  EXPECT_EQ(l["count"], 11);
  for (const char* k : {"mean", "std", "p50", "p95", "p99", "max"}) ASSERT_TRUE(l.contains(k)) << k;
  // 18 kernels, two of them 2-round 40 us convolutions each: never faster than the model allows.
  EXPECT_GT(l["p50"].get<double>(), 0.5);
  EXPECT_LE(l["p50"].get<double>(), l["p99"].get<double>());
}

TEST(SimrtE2E, DispatchesWakeTheSimulatedCpThroughTheirDoorbells) {
  // simrt wakes its doorbell's futex after every dispatch, so the CP sees the packets at once
  // instead of at its next write-pointer poll: the daemon counts the ticks those wakes asked for.
  Machine m(gpu_env());
  auto keeper = m.probe();  // a client that keeps the on-demand daemon up to be asked afterwards
  keeper->call("open");
  auto j = run_json(m, {workload(), "online", "--preset", "toy-online", "--duration", "10", "--requests", "3",
                        "--rate", "50", "--arrival", "fixed", "--json"});
  EXPECT_EQ(j["requests_sent"], 3) << "--requests stops the arrivals";
  EXPECT_EQ(j["requests_completed"], 3);
  const auto s = m.status();
  ASSERT_TRUE(s);
  EXPECT_GE((*s)["loop"]["hardware_wakes"].get<uint64_t>(), 1u) << s->dump();
}

TEST(SimrtE2E, TheOnlineWorkloadsThreadsArePunctual) {
  // A request's latency runs from its arrival: the dispatching thread and the waiter run with a
  // 1 ns timer slack and a 100 us time slice (docs/simulator.md, "Live timing").
  Machine m(gpu_env());
  auto c = m.spawn({workload(), "online", "--preset", "toy-online", "--duration", "600", "--rate", "50"});
  const int pid = c->pid();
  // A completed packet: the waiter exists (it starts before the first dispatch).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto served = [&] {
    auto j = m.gpu_stats();
    if (j)
      for (const auto& q : (*j)["queues"])
        if (q["pid"] == pid && q["completed"].get<uint64_t>() > 0) return true;
    return false;
  };
  while (!served() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(served()) << "the workload completed no request";
  std::ifstream slack("/proc/" + std::to_string(pid) + "/timerslack_ns");
  long ns = -1;
  slack >> ns;
  EXPECT_EQ(ns, 1) << "the dispatching thread's timer slack";
  utsname u{};
  int major = 0, minor = 0;
  if (uname(&u) == 0 && std::sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
      std::make_pair(major, minor) >= std::make_pair(6, 12)) {
    // Every thread (the main one dispatches, the second waits): EEVDF's per-task slice.
    int threads = 0;
    for (const auto& t : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
      std::ifstream in(t.path() / "sched");
      for (std::string l; std::getline(in, l);)
        if (l.rfind("se.slice", 0) == 0) {
          ++threads;
          EXPECT_EQ(std::stol(l.substr(l.find(':') + 1)), 100000) << t.path();
        }
    }
    EXPECT_GE(threads, 2);
  }
  c->kill(SIGKILL);
  c->wait_status();
}

TEST(SimrtE2E, OfflineWorkloadReportsIterations) {
  Machine m(gpu_env());
  auto j = run_json(m, {workload(), "offline", "--preset", "gemm2048", "--duration", "0.5", "--json"});
  EXPECT_EQ(j["mode"], "offline");
  EXPECT_GT(j["iterations"].get<int>(), 0);
  EXPECT_GT(j["iterations_per_s"].get<double>(), 0);
  EXPECT_EQ(j["kernels"], j["iterations"]);  // every dispatched GEMM completed
}

// A GEMM loop as the target, a kfd_probe as its debugger (real ptrace, real DBG_TRAP ioctls).
struct Preempted {
  Machine m;
  std::unique_ptr<Child> target, debugger;
  std::string pid;
  explicit Preempted(std::map<std::string, std::string> env) : m(gpu_env(std::move(env))) {
    target = m.spawn({workload(), "offline", "--preset", "gemm2048", "--duration", "60"});
    pid = std::to_string(target->pid());
    const bool up = m.wait_queues([&](const nlohmann::json& q) {
      for (const auto& e : q)
        if (e["pid"] == target->pid()) return true;
      return false;
    });
    EXPECT_TRUE(up) << "the workload never created its queue";
    debugger = m.probe();
    debugger->call("open");
    EXPECT_EQ(debugger->call("seize " + pid), "0 0");
    EXPECT_EQ(debugger->call("enable " + pid), "0 0 1 16");
    EXPECT_EQ(debugger->call("snapshot " + pid).substr(0, 5), "0 0 1");
  }
  ~Preempted() {
    if (target) target->kill(SIGKILL);
  }
  nlohmann::json last_record() const {
    auto j = m.gpu_stats();
    EXPECT_TRUE(j) << "the simulated machine gives no GPU stats";
    return j ? (*j)["gpus"][0]["runlist"].back() : nlohmann::json{};
  }
};

// The GEMM queue's completed packets, as the GPU model counts them.
uint64_t completed(const Preempted& p) {
  auto j = p.m.gpu_stats();
  if (!j) return 0;
  for (const auto& q : (*j)["queues"])
    if (q["pid"] == p.target->pid()) return q["completed"].get<uint64_t>();
  return 0;
}

// Whether the GEMM queue has a packet fetched and not yet completed (a dispatch on the GPU).
bool in_flight(const Preempted& p) {
  auto j = p.m.gpu_stats();
  if (!j) return false;
  for (const auto& q : (*j)["queues"])
    if (q["pid"] == p.target->pid()) return q["fetched"].get<uint64_t>() > q["completed"].get<uint64_t>();
  return false;
}

TEST(SimrtE2E, SuspendedWorkloadMakesNoProgressUntilResumed) {
  Preempted p({});
  // Suspended with a GEMM on the GPU, so that its waves are saved and later restored. The host
  // loop has gaps between packets, and a slow (sanitized, loaded) run can land the suspend in
  // one: a suspend that caught nothing is resumed and tried again at the next dispatch.
  nlohmann::json r;
  for (int attempt = 0; attempt < 50; ++attempt) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!in_flight(p) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_EQ(p.debugger->call("suspend " + p.pid + " 0"), "1 0 0x0 ");
    r = p.last_record();
    ASSERT_EQ(r["kind"], "suspend");
    if (r["waves_saved"].get<uint64_t>() > 0) break;
    ASSERT_EQ(p.debugger->call("resume " + p.pid + " 0"), "1 0 0x0 ");
  }
  ASSERT_GT(r["waves_saved"].get<uint64_t>(), 0u) << "no suspend caught the GEMM in flight";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const uint64_t frozen = completed(p);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(completed(p), frozen);
  ASSERT_EQ(p.debugger->call("resume " + p.pid + " 0"), "1 0 0x0 ");
  EXPECT_EQ(p.last_record()["kind"], "resume");
  EXPECT_EQ(p.last_record()["waves_restored"], r["waves_saved"]);  // nothing lost, nothing redone
  // Progress again, polled with a deadline: a loaded machine may take its time.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (completed(p) <= frozen && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GT(completed(p), frozen);
}

// More records than one reply may carry (protocol kGpuStatsPage): the client pages through them
// and hands back one gap-free history.
TEST(SimrtE2E, GpuStatsPageThroughLongHistories) {
  Preempted p({});
  const std::size_t cycles = sim::protocol::kGpuStatsPage / 2 + 10;
  for (std::size_t i = 0; i < cycles; ++i) {
    ASSERT_EQ(p.debugger->call("suspend " + p.pid + " 0"), "1 0 0x0 ") << "cycle " << i;
    ASSERT_EQ(p.debugger->call("resume " + p.pid + " 0"), "1 0 0x0 ") << "cycle " << i;
  }
  const auto all = p.m.gpu_stats();
  ASSERT_TRUE(all);
  const auto& gpu = (*all)["gpus"][0];
  const auto& records = gpu["runlist"];
  ASSERT_GT(records.size(), sim::protocol::kGpuStatsPage);
  for (std::size_t i = 1; i < records.size(); ++i)
    ASSERT_EQ(records[i]["seq"].get<uint64_t>(), records[i - 1]["seq"].get<uint64_t>() + 1) << i;
  EXPECT_EQ(records.back()["seq"], gpu["last_seq"]);
  EXPECT_FALSE(gpu.contains("more"));
  std::size_t suspends = 0;
  for (const auto& r : records) suspends += r["kind"] == "suspend";
  EXPECT_EQ(suspends, cycles);
  // From a mark: exactly the later records.
  const uint64_t mark = records[records.size() - 7]["seq"].get<uint64_t>();
  auto r = sim::protocol::fetch_gpu_stats((p.m.dir() / "kfdsim.sock").string(), mark);
  ASSERT_EQ(r.error, 0);
  ASSERT_EQ(r.stats["gpus"][0]["runlist"].size(), 6u);
  EXPECT_EQ(r.stats["gpus"][0]["runlist"][0]["seq"].get<uint64_t>(), mark + 1);
}

TEST(SimrtE2E, PreemptionTimeoutSetsBit30) {
  Preempted p(faults("timeout@1", "200"));
  EXPECT_EQ(p.debugger->call("suspend " + p.pid + " 0"), "0 0 0x40000000 ");
  const auto r = p.last_record();
  EXPECT_EQ(r["kind"], "suspend");
  EXPECT_EQ(r["fault"], "timeout");
  EXPECT_EQ(r["result"], -ETIME);
  EXPECT_EQ(r["stop_latency_ns"], 200'000'000);
  // The next suspend is healthy.
  EXPECT_EQ(p.debugger->call("resume " + p.pid + " 0"), "1 0 0x0 ");
  EXPECT_EQ(p.debugger->call("suspend " + p.pid + " 0"), "1 0 0x0 ");
  EXPECT_EQ(p.last_record()["result"], 0);
  EXPECT_EQ(p.debugger->call("resume " + p.pid + " 0"), "1 0 0x0 ");
}

TEST(SimrtE2E, ResetInProgressEioSetsBit30AtOnce) {
  Preempted p(faults("eio@1"));
  EXPECT_EQ(p.debugger->call("suspend " + p.pid + " 0"), "0 0 0x40000000 ");
  const auto r = p.last_record();
  EXPECT_EQ(r["fault"], "eio");
  EXPECT_EQ(r["result"], -EIO);
  EXPECT_EQ(r["round_trip_ns"], nullptr);
}

TEST(SimrtE2E, HangEndsOnlyWithThePreemptionTimeout) {
  Preempted p(faults("hang@1", "300"));
  EXPECT_EQ(p.debugger->call("suspend " + p.pid + " 0"), "0 0 0x40000000 ");
  const auto r = p.last_record();
  EXPECT_EQ(r["fault"], "hang");
  EXPECT_EQ(r["result"], -ETIME);
  EXPECT_EQ(r["stop_latency_ns"], 300'000'000);
}

TEST(SimrtE2E, SlowCwsrSaveShowsInTheRecordedSaveCost) {
  Preempted p(faults("slow_save@1x100"));
  EXPECT_EQ(p.debugger->call("suspend " + p.pid + " 0"), "1 0 0x0 ");
  const auto r = p.last_record();
  EXPECT_EQ(r["fault"], "slow_save");
  EXPECT_EQ(r["result"], 0);
  const auto waves = r["waves_saved"].get<uint64_t>();
  ASSERT_GT(waves, 0u) << "the GEMM loop keeps the device busy";
  // The save costs the state of the waves in flight (docs/sim-model.md §5), 100 times over.
  ASSERT_TRUE(r.contains("bytes_saved")) << r.dump();
  const auto bytes = r["bytes_saved"].get<uint64_t>();
  ASSERT_GT(bytes, 0u);
  const auto prof = sim::gpu::mi308x_profile();
  EXPECT_EQ(r["save_ns"].get<int64_t>(), static_cast<int64_t>(prof.save_ns(bytes) * 100.0));
  EXPECT_EQ(p.debugger->call("resume " + p.pid + " 0"), "1 0 0x0 ");
}

TEST(SimrtE2E, TargetKilledDuringAHungSuspendLeavesTheMachineUsable) {
  Preempted p(faults("hang@1", "1500"));
  p.debugger->send("bg suspend " + p.pid + " 0");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // Not reaped here: the seized target's exit is reported to its tracer (the probe) first.
  p.target->kill(SIGKILL);
  auto answer = p.debugger->line(std::chrono::seconds(20));
  ASSERT_TRUE(answer) << "the blocked suspend never returned";
  EXPECT_EQ(answer->rfind("bg ", 0), 0u) << *answer;
  ASSERT_TRUE(p.m.status());
  // The same machine still runs work.
  auto c = p.m.spawn({build_path("bin/simrt_smoke").string()});
  EXPECT_TRUE(read_kv(*c).count("closed"));
  c->send("go");
  EXPECT_EQ(c->line(), "ok");
  c->finish();
}

TEST(SimrtE2E, AWorkloadWhoseDaemonDiesEndsWithTheReasonInsteadOfWaitingForever) {
  // The workload waits on completion signals only the simulated GPU writes: with kfdsimd gone
  // nothing ever writes them, and the wait must notice that the device has gone. Killed outright
  // (nothing in the log) and stopped by a signal (its log says so).
  for (int sig : {SIGKILL, SIGTERM}) {
    SCOPED_TRACE("daemon ended by signal " + std::to_string(sig));
    Machine m(gpu_env());
    auto c = m.spawn({"/bin/sh", "-c", "exec \"$0\" offline --preset cnn --duration 600 2>&1", workload()});
    const int pid = c->pid();
    ASSERT_TRUE(m.wait_queues([&](const nlohmann::json& q) {
      for (const auto& e : q)
        if (e["pid"] == pid) return true;
      return false;
    })) << "the workload never made a queue";
    const int daemon = (*m.status())["daemon_pid"].get<int>();
    ::kill(daemon, sig);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!process_ended(pid) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!process_ended(pid)) {
      ADD_FAILURE() << "the workload still waits 30 s after its daemon died";
      c->kill(SIGKILL);
    }
    const int status = c->wait_status();
    const std::string out = c->rest();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << "status " << status << "\n" << out;
    const std::string who = "kfdsimd (pid " + std::to_string(daemon) + ", machine " + m.dir().string() + ") exited: ";
    EXPECT_NE(out.find(who), std::string::npos) << out;
    EXPECT_NE(out.find(sig == SIGKILL ? "ended without saying why" : "signal 15: stopping"), std::string::npos) << out;
    EXPECT_NE(out.find("the GPU went away while waiting for it"), std::string::npos) << out;
    EXPECT_TRUE(daemons_in(m.dir()).empty()) << "a new daemon was started for a process whose daemon died";
  }
}

}  // namespace
}  // namespace gpreempt::testing
