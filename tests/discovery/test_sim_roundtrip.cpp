// The simulated KFD (sim/device) renders topology, per-process sysfs and debugfs mqds/hqds/rls;
// decoding those files must give back the state that produced them (issue: round-trip tests).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "device_rig.h"  // tests/sim_device: KfdDevice over a fake host
#include "discovery/gfx9_mqd_layout.h"
#include "discovery/hqds.h"
#include "discovery/mqds.h"
#include "discovery/process_discovery.h"
#include "discovery/properties.h"
#include "discovery/queue_map.h"
#include "discovery/rls.h"

using namespace gpreempt::discovery;
using gpreempt::sim::testing::Rig;
namespace fs = std::filesystem;

namespace {

constexpr int kPid = 4711;

struct Machine {
  Rig rig;
  std::vector<gpreempt::sim::QueueView> views;
  std::map<std::string, std::string> files;

  explicit Machine(std::vector<uint32_t> priorities) {
    rig.spawn(kPid);
    EXPECT_EQ(rig.runtime_enable(kPid), 0);
    for (uint32_t p : priorities) {
      auto a = rig.aql_queue(kPid);
      a.queue_priority = p;
      EXPECT_EQ(rig.create(kPid, a), 0);
    }
    views = rig.dev->queues();
    files = rig.dev->render_files();
  }
  const std::string& file(const std::string& k) const { return files.at(k); }
};

}  // namespace

TEST(SimRoundTrip, MqdsDecodeToTheQueuesCreated) {
  Machine m({3, 7, 13});
  ASSERT_EQ(m.views.size(), 3u);
  auto d = decode_mqds(m.file("sys/kernel/debug/kfd/mqds"), "sim mqds");
  ASSERT_TRUE(d.complete) << (d.diagnostics.empty() ? "" : d.diagnostics[0].to_string());
  ASSERT_EQ(d.processes.size(), 1u);
  EXPECT_EQ(d.processes[0].pid, kPid);
  ASSERT_EQ(d.processes[0].queues.size(), 3u);
  const uint32_t xccs = m.rig.profile_.num_xcc;
  for (const auto& v : m.views) {
    const MqdsQueue* q = nullptr;
    for (const auto& c : d.processes[0].queues)
      if (c.xcc_copies.at(0).compute.ring_base == v.ring_base) q = &c;
    ASSERT_NE(q, nullptr) << "no MQD with ring base " << std::hex << v.ring_base;
    EXPECT_EQ(q->type, "compute");
    EXPECT_EQ(q->gpu_id, v.gpu_id);
    ASSERT_EQ(q->xcc_copies.size(), xccs);
    // Each XCC saves its waves in its own slice of the CWSR area: copy 0 starts at the base.
    EXPECT_EQ(q->xcc_copies[0].compute.ctx_save_base, v.ctx_save_restore_address);
    for (std::size_t x = 1; x < q->xcc_copies.size(); ++x)
      EXPECT_GT(q->xcc_copies[x].compute.ctx_save_base, q->xcc_copies[x - 1].compute.ctx_save_base);
    for (const auto& c : q->xcc_copies) {
      EXPECT_TRUE(c.complete);
      EXPECT_EQ(c.compute.ring_base, v.ring_base);
      EXPECT_EQ(c.compute.rptr_report_address, v.read_pointer_address);
      EXPECT_EQ(c.compute.wptr_poll_address, v.write_pointer_address);
      EXPECT_EQ(c.compute.queue_priority, v.priority);
      EXPECT_EQ(c.compute.pipe_priority, gpreempt::discovery::gfx9::pipe_priority_for(v.priority));
    }
  }
}

TEST(SimRoundTrip, HqdsRlsAndTheQueueMapAgreeWithTheDevice) {
  Machine m({7, 7});
  auto h = decode_hqds(m.file("sys/kernel/debug/kfd/hqds"), "sim hqds");
  ASSERT_TRUE(h.complete) << (h.diagnostics.empty() ? "" : h.diagnostics[0].to_string());
  auto r = decode_rls(m.file("sys/kernel/debug/kfd/rls"), "sim rls");
  ASSERT_TRUE(r.complete) << (r.diagnostics.empty() ? "" : r.diagnostics[0].to_string());
  auto d = decode_mqds(m.file("sys/kernel/debug/kfd/mqds"), "sim mqds");

  std::size_t map_queues = 0, map_process = 0;
  for (const auto& n : r.nodes)
    for (const auto& p : n.packets) {
      map_queues += p.opcode_name == "MAP_QUEUES";
      map_process += p.opcode_name == "MAP_PROCESS";
    }
  EXPECT_EQ(map_process, 1u);
  EXPECT_EQ(map_queues, 2u);

  // Per-process sysfs written out as files, read back by the I/O side of discovery.
  const fs::path root = fs::temp_directory_path() / ("gpreempt_sim_rt_" + std::to_string(::getpid()));
  fs::remove_all(root);
  for (const auto& [k, v] : m.files) {
    if (k.rfind("sys/class/kfd/kfd/", 0) != 0) continue;
    const fs::path p = root / k;
    if (!k.empty() && k.back() == '/') {
      fs::create_directories(p);
      continue;
    }
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << v;
  }
  SystemRoots roots;
  roots.kfd_sysfs = (root / "sys/class/kfd/kfd").string();
  QueueMapInputs in;
  in.known = sysfs_queues(roots, kPid);
  ASSERT_EQ(in.known.size(), 2u);
  in.mqds = &d;
  in.hqds = &h;
  in.rls = &r;
  auto map = build_queue_map(in);
  fs::remove_all(root);

  ASSERT_EQ(map.queues.size(), 2u);
  const uint32_t xccs = m.rig.profile_.num_xcc;
  for (const auto& row : map.queues) {
    const gpreempt::sim::QueueView* v = nullptr;
    for (const auto& c : m.views)
      if (c.ring_base == row.ring_base) v = &c;
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(row.pid.value(), kPid);
    EXPECT_EQ(row.queue_id.value(), v->queue_id);
    EXPECT_EQ(row.rptr_address.value(), v->read_pointer_address);
    EXPECT_EQ(row.hw_slots.size(), xccs);
    for (const auto& s : row.hw_slots) EXPECT_TRUE(s.active);
    EXPECT_TRUE(row.in_runlist.value());
  }
}

TEST(SimRoundTrip, TopologyPropertiesDecode) {
  Machine m({});
  std::size_t gpus = 0;
  for (const auto& [k, v] : m.files) {
    // A node's own properties (nodes/N/properties), not its memory banks', caches' or links'.
    static const std::string kNodes = "sys/class/kfd/kfd/topology/nodes/";
    if (k.rfind(kNodes, 0) != 0) continue;
    const std::string rest = k.substr(kNodes.size());
    const auto slash = rest.find('/');
    if (slash == std::string::npos || rest.substr(slash) != "/properties") continue;
    auto p = decode_properties(v, k);
    EXPECT_TRUE(p.complete) << k;
    if (!p.gpu) continue;
    ++gpus;
    EXPECT_EQ(p.gfx_target.value(), "gfx942") << k;
    EXPECT_EQ(p.num_xcc.value(), m.rig.profile_.num_xcc);
    EXPECT_TRUE(p.compute_units.has_value());
  }
  EXPECT_EQ(gpus, 1u);
}
