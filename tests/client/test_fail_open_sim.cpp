// The hint client failing open against the real gpreemptd on a simulated machine: an online
// workload (gpreempt-workload online --hint, lib/client's HintClient) keeps serving while the
// daemon is killed and restarted under it. No request is lost or fails, the daemon's replacement
// accounts the workload's requests again (its status), and the workload's --json counts the
// requests (protected or not) and the reconnect. Every wait is a poll with a deadline.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <string>

#include "daemon_rig.h"

namespace gpreempt::testing {
namespace {

// Requests whose end the daemon has accounted, over every GPU (0 when it does not answer).
int accounted_requests(const DaemonRig& rig) {
  const auto s = rig.status();
  int n = 0;
  if (s.is_object())
    for (const auto& g : s["gpus"]) n += g["online_request_latency_ms"]["count"].get<int>();
  return n;
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size()))
    ++n;
  return n;
}

TEST(ClientFailOpenSim, AWorkloadLosesNoRequestWhenGpreemptdIsKilledAndRestarted) {
  DaemonRig rig;
  auto daemon = rig.start_daemon();  // no config file: GPREEMPT_CLASS decides
  auto env = rig.machine().env();
  env.push_back("GPREEMPT_CLASS=online");
  // Long enough for a kill, a restart and a rediscovery on a loaded machine; 50 requests/s.
  Child online({"gpreempt-workload", "online", "--preset", "cnn", "--duration", "15", "--rate",
                "50", "--arrival", "fixed", "--hint", rig.socket(), "--json"},
               env, -1, bin("gpreempt-workload").string());
  ASSERT_TRUE(eventually([&] { return accounted_requests(rig) > 0; }))
      << "the first daemon never accounted a request: " << rig.status().dump();

  daemon->kill(SIGKILL);  // mid-run: no goodbye, a stale socket file left behind
  daemon.reset();
  daemon = rig.start_daemon();
  // Protected again: the new daemon (its counts start at zero) sees whole requests of the
  // workload, once it has rediscovered the process and the client has reconnected.
  EXPECT_TRUE(eventually([&] { return accounted_requests(rig) > 0; }, std::chrono::seconds(60)))
      << "the restarted daemon never accounted a request: " << rig.status().dump();

  const std::string out = online.rest(std::chrono::seconds(120));
  const int code = online.wait(std::chrono::seconds(30));
  const std::string err = online.stderr_text();
  ASSERT_EQ(code, 0) << err;
  const auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_GT(j["requests_sent"].get<int>(), 0);
  EXPECT_EQ(j["requests_completed"], j["requests_sent"]) << "a request was lost: " << out;
  const auto& h = j["hint"];
  EXPECT_EQ(h["requests_protected"].get<int>() + h["requests_unprotected"].get<int>(),
            j["requests_sent"].get<int>())
      << out;
  EXPECT_GT(h["requests_protected"].get<int>(), 0);
  // One reconnect, to the new daemon; or two, when the client's reset arrived before the killed
  // daemon's listener was closed (the kernel closes a dying process's descriptors in fd order, and
  // an accepted connection may hold a lower fd than the listener): its immediate retry then lands
  // in the dying listener's backlog, counts as a connection and is reset at once. Seen once in a
  // full suite at load 4 on 2 cores (the likely cause, not proven); more would be a new defect.
  EXPECT_GE(h["reconnects"].get<int>(), 1) << out << err;
  EXPECT_LE(h["reconnects"].get<int>(), 2) << out << err;
  // A request that came while no daemon listened ran unprotected, with one warning and one when
  // protection was back. (Whether one came depends on how fast the new daemon was up: a request
  // after it was reconnects at once, silently.)
  const std::size_t lost = count(err, "cannot be reached");
  EXPECT_LE(lost, 1u) << err;
  EXPECT_EQ(count(err, "protected again"), lost) << err;
  if (lost == 1) {
    EXPECT_GE(h["requests_unprotected"].get<int>(), 1) << out;
  }
}

}  // namespace
}  // namespace gpreempt::testing
