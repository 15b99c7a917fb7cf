// What the daemon's end-to-end tests share: a simulated machine, gpreemptd on it, workload and
// peer processes, and polls with deadlines (never sleeps as synchronisation).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "client/protocol.h"
#include "sim_harness.h"

namespace gpreempt::testing {

// Polls `done` until it holds or `timeout` passes.
bool eventually(const std::function<bool()>& done,
                std::chrono::milliseconds timeout = std::chrono::seconds(20));

class DaemonRig {
 public:
  // `machine_options`: kfdsim start options; `sim_env`: KEY=VALUE for the simulated device.
  explicit DaemonRig(const std::vector<std::string>& machine_options = {},
                     const std::vector<std::pair<std::string, std::string>>& sim_env = {});
  Machine& machine() { return *machine_; }
  std::string socket() const { return (machine_->dir() / "gpreemptd.sock").string(); }
  std::filesystem::path file(const std::string& name) const { return machine_->dir() / name; }
  std::vector<uint32_t> gpu_ids() const;

  // Starts gpreemptd (optionally with a config file) and waits until it answers "status".
  std::unique_ptr<Child> start_daemon(const std::vector<std::string>& extra = {});
  // gpreemptd with `args` only: socket and metrics come from its config file (which must put the
  // socket on socket()), so a reload may change them.
  std::unique_ptr<Child> start_daemon_from_config(const std::filesystem::path& config);
  // An offline-style workload (gpreempt-workload offline) with these extra environment entries.
  std::unique_ptr<Child> workload(const std::vector<std::string>& env, uint32_t gpu = 0);
  // The hint peer (gpreemptd_test_peer), with one queue created on `gpu` and connected.
  std::unique_ptr<Child> peer(const std::vector<std::string>& env, uint32_t gpu = 0,
                              const std::vector<std::string>& args = {}, int uid = -1);

  // One message to the daemon from this (non-GPU) test process.
  std::optional<client::Reply> ask(const client::Message& m) const;
  // The same on another socket path.
  std::optional<client::Reply> ask_at(const std::string& socket_path,
                                      const client::Message& m) const;
  nlohmann::json status() const;
  // Every queue of `pid` in the device's view; suspended when all are.
  bool all_suspended(int pid) const;
  bool none_suspended(int pid) const;
  // The process as the daemon lists it on any GPU (null when absent).
  nlohmann::json process(int pid) const;

 private:
  std::unique_ptr<Machine> machine_;
};

// Waits (a gtest assertion) until the daemon lists `pid` under `cls` with its queues found.
void wait_classified(DaemonRig& rig, int pid, const std::string& cls);

inline client::Message message(client::Op op) {
  client::Message m;
  m.op = op;
  return m;
}

// The peer's reply to one command, parsed (the raw line when it is not JSON).
nlohmann::json command(Child& peer, const std::string& line);

}  // namespace gpreempt::testing
