// The simulated sysfs/debugfs files: kernel format rules (FACTS §12, §13) and, where
// ../shared/realdata has a capture of the same machine (MI308X), line-for-line structure and
// byte-identical blocks for the state the capture shows.
#include <discovery/gfx9_mqd_layout.h>
#include <fixtures.h>

#include <regex>
#include <set>
#include <sstream>

#include "device_rig.h"

namespace gpreempt::sim::testing {
namespace {

constexpr int kCapturedPid = 94314;  // the process of realdata/debugfs/03
const char* const kMqds = "sys/kernel/debug/kfd/mqds";
const char* const kHqds = "sys/kernel/debug/kfd/hqds";
const char* const kRls = "sys/kernel/debug/kfd/rls";

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

const std::regex kHexRow4(R"(    [0-9a-f]{8}:( [0-9a-f]{8}){1,8})");  // mqds / hqds rows
const std::regex kHexRow2(R"(  [0-9a-f]{8}:( [0-9a-f]{8}){1,8})");    // rls rows

std::string real_capture(const char* name) {
  return gpreempt::testing::read_file(gpreempt::testing::shared_dir() / "realdata" / "debugfs" /
                                      name);
}

// Five queues as the captured process had, plus runtime enabled.
// The first one is a small (4 KiB) ring, as queue 0 of the capture was.
void five_queues(Rig& r) {
  r.spawn(kCapturedPid);
  ASSERT_EQ(r.runtime_enable(kCapturedPid), 0);
  auto small = r.aql_queue(kCapturedPid, 4096);
  ASSERT_EQ(r.create(kCapturedPid, small), 0);
  for (int i = 1; i < 5; ++i) r.new_queue(kCapturedPid);
}

// ---- topology (FACTS §13.1) -------------------------------------------------------------------

TEST(SimDeviceRender, Facts13_1_TopologyKeyOrderCpuFirstAndSubdirs) {
  Rig r({}, "mi308x", 2);
  auto f = r.dev->render_files();
  const std::string t = "sys/class/kfd/kfd/topology/";
  EXPECT_EQ(f.at(t + "generation_id"), "3\n");
  EXPECT_EQ(f.at(t + "system_properties"), "platform_oem 0\nplatform_id 0\nplatform_rev 0\n");
  const std::vector<std::string> common = {"cpu_cores_count",
                                           "simd_count",
                                           "mem_banks_count",
                                           "caches_count",
                                           "io_links_count",
                                           "p2p_links_count",
                                           "cpu_core_id_base",
                                           "simd_id_base",
                                           "max_waves_per_simd",
                                           "lds_size_in_kb",
                                           "gds_size_in_kb",
                                           "num_gws",
                                           "wave_front_size",
                                           "array_count",
                                           "simd_arrays_per_engine",
                                           "cu_per_simd_array",
                                           "simd_per_cu",
                                           "max_slots_scratch_cu",
                                           "gfx_target_version",
                                           "vendor_id",
                                           "device_id",
                                           "location_id",
                                           "domain",
                                           "drm_render_minor",
                                           "hive_id",
                                           "num_sdma_engines",
                                           "num_sdma_xgmi_engines",
                                           "num_sdma_queues_per_engine",
                                           "num_cp_queues",
                                           "cwsr_size",
                                           "ctl_stack_size"};
  const std::vector<std::string> gpu_only = {"max_engine_clk_fcompute",
                                             "local_mem_size",
                                             "fw_version",
                                             "capability",
                                             "capability2",
                                             "debug_prop",
                                             "sdma_fw_version",
                                             "unique_id",
                                             "num_xcc"};
  auto keys = [](const std::string& props) {
    std::vector<std::string> k;
    for (const auto& l : lines(props)) {
      EXPECT_TRUE(std::regex_match(l, std::regex(R"([a-z0-9_]+ [0-9]+)"))) << l;
      k.push_back(l.substr(0, l.find(' ')));
    }
    return k;
  };
  auto cpu = common;
  cpu.push_back("max_engine_clk_ccompute");
  auto gpu = common;
  gpu.insert(gpu.end(), gpu_only.begin(), gpu_only.end());
  gpu.push_back("max_engine_clk_ccompute");
  // MI308X machine: two CPU nodes, then the GPUs.
  for (int n : {0, 1}) {
    EXPECT_EQ(keys(f.at(t + "nodes/" + std::to_string(n) + "/properties")), cpu);
    EXPECT_EQ(f.at(t + "nodes/" + std::to_string(n) + "/gpu_id"), "0\n");
    EXPECT_EQ(f.at(t + "nodes/" + std::to_string(n) + "/name"), "\n");
  }
  for (int n : {2, 3}) {
    const std::string d = t + "nodes/" + std::to_string(n) + "/";
    EXPECT_EQ(keys(f.at(d + "properties")), gpu);
    EXPECT_EQ(f.at(d + "gpu_id"), std::to_string(r.profile_.gpus[n - 2].gpu_id) + "\n");
    EXPECT_EQ(f.at(d + "name"), "ip discovery\n");
    for (const char* sub : {"mem_banks/", "caches/", "io_links/", "p2p_links/", "perf/"})
      EXPECT_TRUE(f.count(d + sub)) << d + sub;
  }
  EXPECT_FALSE(f.count(t + "nodes/4/properties"));
  // The same tree under the device path.
  for (const auto& [k, v] : f) {
    if (k.starts_with("sys/class/kfd/kfd/")) {
      EXPECT_EQ(f.at("sys/devices/virtual/kfd/kfd/" + k.substr(18)), v) << k;
    }
  }
}

TEST(SimDeviceRender, Facts13_1_Mi308xTopologyMatchesRocminfoCapture) {
  GPREEMPT_REQUIRE_SHARED();
  // rocminfo of the captured machine: Agent 3 is topology node 2 (the first GPU).
  const auto text = real_capture("04_mi308x_rocm702_rocminfo.txt");
  const auto agent = text.substr(text.find("Agent 3"), text.find("Agent 4") - text.find("Agent 3"));
  auto field = [&](const std::string& key) {
    auto at = agent.find(key);
    EXPECT_NE(at, std::string::npos) << key;
    std::istringstream in(agent.substr(at + key.size()));
    std::string v;
    in >> v;
    return v;
  };
  Rig r;
  const auto props = r.dev->render_files().at("sys/class/kfd/kfd/topology/nodes/2/properties");
  auto prop = [&](const std::string& key) {
    for (const auto& l : lines(props))
      if (l.starts_with(key + " ")) return std::stoull(l.substr(key.size() + 1));
    ADD_FAILURE() << "no property " << key;
    return 0ull;
  };
  EXPECT_EQ(prop("simd_count") / prop("simd_per_cu"), std::stoull(field("Compute Unit:")));
  EXPECT_EQ(prop("simd_per_cu"), std::stoull(field("SIMDs per CU:")));
  EXPECT_EQ(prop("array_count") / prop("simd_arrays_per_engine"),
            std::stoull(field("Shader Engines:")));
  EXPECT_EQ(prop("device_id"), std::stoull(field("Chip ID:")));
  EXPECT_EQ(prop("location_id"), std::stoull(field("BDFID:")));
  EXPECT_EQ(prop("max_engine_clk_fcompute"), std::stoull(field("Max Clock Freq. (MHz):")));
  EXPECT_EQ(prop("fw_version"), std::stoull(field("Packet Processor uCode::")));
  EXPECT_EQ(prop("sdma_fw_version"), std::stoull(field("SDMA engine uCode::")));
  EXPECT_EQ(prop("wave_front_size"), std::stoull(field("Wavefront Size:")));
  EXPECT_EQ(prop("max_waves_per_simd") * prop("simd_per_cu"),
            std::stoull(field("Max Waves Per CU:")));
  EXPECT_EQ(prop("unique_id"), std::stoull(field("Uuid:").substr(4), nullptr, 16));
  EXPECT_EQ(prop("gfx_target_version"), 90402u) << field("Name:");
  EXPECT_EQ(prop("max_engine_clk_ccompute"), 3800u);
  // The first VRAM pool's size (KB) is the node's memory bank (ROCr builds its pools from it).
  const auto bank = r.dev->render_files().at("sys/class/kfd/kfd/topology/nodes/2/mem_banks/0/properties");
  uint64_t bank_bytes = 0;
  for (const auto& l : lines(bank))
    if (l.starts_with("size_in_bytes ")) bank_bytes = std::stoull(l.substr(14));
  const auto pools = agent.substr(agent.find("Pool Info:"));
  const auto size_at = pools.find("Size:");
  ASSERT_NE(size_at, std::string::npos);
  EXPECT_EQ(bank_bytes / 1024, std::stoull(pools.substr(size_at + 5)));
}

// ---- per-process sysfs (FACTS §13.2) ------------------------------------------------------------

TEST(SimDeviceRender, Facts13_2_ProcQueuesNoTrailingNewlineInternalType) {
  Rig r;
  r.spawn(kCapturedPid);
  r.new_queue(kCapturedPid);  // AQL -> 0
  auto a = r.aql_queue(kCapturedPid);
  a.queue_type = KFD_IOC_QUEUE_TYPE_SDMA;  // -> 1
  ASSERT_EQ(r.create(kCapturedPid, a), 0);
  a = r.aql_queue(kCapturedPid);
  a.queue_type = KFD_IOC_QUEUE_TYPE_SDMA_XGMI;  // -> 3 (newest enum, DIQ removed)
  ASSERT_EQ(r.create(kCapturedPid, a), 0);
  auto f = r.dev->render_files();
  const std::string d = "sys/class/kfd/kfd/proc/94314/";
  EXPECT_EQ(f.at(d + "pasid"), "0\n");
  EXPECT_EQ(f.at(d + "queues/0/type"), "0");
  EXPECT_EQ(f.at(d + "queues/1/type"), "1");
  EXPECT_EQ(f.at(d + "queues/2/type"), "3");
  EXPECT_EQ(f.at(d + "queues/0/size"), "1048576");
  EXPECT_EQ(f.at(d + "queues/0/gpuid"), std::to_string(r.gpu()));
  ASSERT_EQ(r.destroy(kCapturedPid, 1), 0);
  f = r.dev->render_files();
  EXPECT_FALSE(f.count(d + "queues/1/type"));
  r.dev->process_exited(kCapturedPid);
  f = r.dev->render_files();
  EXPECT_FALSE(f.count(d + "pasid"));
}

// ---- mqds (FACTS §12.1, §14, §18)
// -----------------------------------------------------------------

TEST(SimDeviceRender, Facts12_1_MqdsShape64LinesPerXccNewestFirst) {
  Rig r;
  five_queues(r);
  auto a = r.aql_queue(kCapturedPid);
  a.queue_type = KFD_IOC_QUEUE_TYPE_SDMA;
  ASSERT_EQ(r.create(kCapturedPid, a), 0);
  auto l = lines(r.dev->render_files().at(kMqds));
  ASSERT_EQ(l.size(), 1u + 1 + 16 + 5 * (1 + 64 * 4));
  EXPECT_EQ(l[0], "Process 94314 PASID 94314:");
  EXPECT_EQ(l[1], "  SDMA queue on device f7bc") << "newest queue (the SDMA one) first";
  std::size_t i = 18;
  for (int q = 0; q < 5; ++q) {
    EXPECT_EQ(l[i++], "  Compute queue on device f7bc");
    for (int xcc = 0; xcc < 4; ++xcc)
      for (int row = 0; row < 64; ++row, ++i) {
        ASSERT_TRUE(std::regex_match(l[i], kHexRow4)) << l[i];
        char off[16];
        std::snprintf(off, sizeof off, "%.8x:", row * 32);
        EXPECT_EQ(l[i].substr(4, 9), off) << "offsets restart per XCC copy";
      }
  }
}

// Decodes the mqds text into per-queue lists of 512-dword copies.
std::vector<std::vector<std::vector<uint32_t>>> decode_mqds(const std::string& text) {
  std::vector<std::vector<std::vector<uint32_t>>> queues;
  for (const auto& l : lines(text)) {
    if (l.starts_with("  Compute")) {
      queues.emplace_back();
      continue;
    }
    if (!l.starts_with("    ") || queues.empty()) continue;
    if (l.substr(4, 8) == "00000000") queues.back().emplace_back();
    std::istringstream in(l.substr(14));
    for (std::string w; in >> w;)
      queues.back().back().push_back(static_cast<uint32_t>(std::stoul(w, nullptr, 16)));
  }
  return queues;
}

TEST(SimDeviceRender, Facts14_MqdFieldsDriverFills) {
  Rig r;
  r.spawn(kCapturedPid);
  auto a = r.aql_queue(kCapturedPid);
  a.queue_priority = 12;
  a.ring_base_address += 0x100;  // keep it 256-aligned, non-zero low bits after >> 8
  ASSERT_EQ(r.create(kCapturedPid, a), 0);
  auto mq = decode_mqds(r.dev->render_files().at(kMqds));
  ASSERT_EQ(mq.size(), 1u);
  ASSERT_EQ(mq[0].size(), 4u);
  namespace m = gpreempt::discovery::gfx9::mqd;
  for (uint32_t xcc = 0; xcc < 4; ++xcc) {
    const auto& d = mq[0][xcc];
    ASSERT_EQ(d.size(), 512u);
    EXPECT_EQ(d[m::header], 0xC0310800u);
    EXPECT_EQ(d[m::compute_pipelinestat_enable], 1u);
    EXPECT_EQ(d[m::compute_static_thread_mgmt_se0], 0xffffffffu);
    EXPECT_EQ(d[m::cp_hqd_pipe_priority], 2u) << "priority 11-15 -> HIGH";
    EXPECT_EQ(d[m::cp_hqd_queue_priority], 12u);
    EXPECT_EQ(d[m::cp_hqd_quantum], 0x111u);
    EXPECT_EQ(uint64_t{d[m::cp_hqd_pq_base_lo]} | uint64_t{d[m::cp_hqd_pq_base_hi]} << 32,
              a.ring_base_address >> 8);
    EXPECT_EQ(uint64_t{d[m::cp_hqd_pq_rptr_report_addr_lo]} |
                  uint64_t{d[m::cp_hqd_pq_rptr_report_addr_hi]} << 32,
              a.read_pointer_address);
    EXPECT_EQ(uint64_t{d[m::cp_hqd_pq_wptr_poll_addr_lo]} |
                  uint64_t{d[m::cp_hqd_pq_wptr_poll_addr_hi]} << 32,
              a.write_pointer_address);
    EXPECT_EQ(d[m::cp_hqd_active], 1u);
    EXPECT_EQ(d[m::cp_hqd_vmid], 0u);
    EXPECT_EQ(d[m::cp_hqd_aql_control], 1u);
    EXPECT_EQ(uint64_t{d[m::cp_mqd_base_addr_lo]} - mq[0][0][m::cp_mqd_base_addr_lo],
              xcc * 0x3000u);
    EXPECT_EQ(uint64_t{d[m::cp_hqd_ctx_save_base_addr_lo]} |
                  uint64_t{d[m::cp_hqd_ctx_save_base_addr_hi]} << 32,
              a.ctx_save_restore_address + xcc * uint64_t{a.ctx_save_restore_size});
    EXPECT_EQ(d[m::cp_hqd_ctx_save_size], a.ctx_save_restore_size);
    EXPECT_EQ(d[m::cp_hqd_cntl_stack_size], a.ctl_stack_size);
    EXPECT_EQ((d[m::cp_hqd_pq_doorbell_control] >> 2) & 0x3ffffff, 0x1000u) << "queue 0 doorbell";
    EXPECT_EQ(d[m::cp_hqd_pq_control] & 0x3f, 17u) << "1 MiB ring";
  }
  // Priority map 0-6 -> 0, 7-10 -> 1, 11-15 -> 2.
  for (uint32_t prio : {0u, 6u, 7u, 10u, 11u, 15u}) {
    auto b = r.aql_queue(kCapturedPid);
    b.queue_priority = prio;
    ASSERT_EQ(r.create(kCapturedPid, b), 0);
    auto all = decode_mqds(r.dev->render_files().at(kMqds));
    EXPECT_EQ(all[0][0][m::cp_hqd_pipe_priority], prio <= 6 ? 0u : prio <= 10 ? 1u : 2u) << prio;
  }
}

TEST(SimDeviceRender, Facts18_MqdsMatchCaptureStructureAndStaticFields) {
  GPREEMPT_REQUIRE_SHARED();
  Rig r;
  five_queues(r);
  const auto ours = lines(r.dev->render_files().at(kMqds));
  const auto cap = lines(real_capture("03_mi308x_rocm702_mqds.txt"));
  ASSERT_EQ(ours.size(), cap.size());
  namespace m = gpreempt::discovery::gfx9::mqd;
  // Same header lines, same offsets column; the dwords the driver fills independently of the
  // process (header, SE masks, logical XCC id, quantum, priorities, controls, stride) agree
  // too. CP_HQD_PQ_CONTROL is compared without PQ_EMPTY (bit 15), which the CP writes back.
  // (Dword 42 is left out: queue 0 of the capture has 1 there, a per-queue setting such as a CU
  // mask the simulator's queues never get.)
  const std::set<std::size_t> fixed = {m::header,
                                       m::compute_pipelinestat_enable,
                                       20,
                                       23,
                                       24,
                                       26,
                                       27,
                                       39,
                                       40,
                                       41,
                                       m::cp_hqd_persistent_state,
                                       m::cp_hqd_pipe_priority,
                                       m::cp_hqd_queue_priority,
                                       m::cp_hqd_quantum,
                                       m::cp_hqd_pq_control,
                                       149,
                                       m::cp_mqd_control,
                                       m::cp_hqd_cntl_stack_offset,
                                       m::cp_hqd_cntl_stack_size,
                                       m::cp_hqd_wg_state_offset,
                                       m::cp_hqd_ctx_save_size,
                                       m::cp_hqd_aql_control,
                                       226};
  auto a = decode_mqds(r.dev->render_files().at(kMqds));
  auto b = decode_mqds(real_capture("03_mi308x_rocm702_mqds.txt"));
  for (std::size_t i = 0; i < ours.size(); ++i) {
    if (!ours[i].starts_with("    ")) {
      EXPECT_EQ(ours[i], cap[i]) << "line " << i + 1;
    } else {
      EXPECT_EQ(ours[i].substr(0, 14), cap[i].substr(0, 14)) << "line " << i + 1;
    }
  }
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t q = 0; q < a.size(); ++q)
    for (std::size_t x = 0; x < 4; ++x)
      for (std::size_t dw : fixed) {
        const uint32_t mask = dw == m::cp_hqd_pq_control ? ~0x8000u : ~0u;
        EXPECT_EQ(a[q][x][dw] & mask, b[q][x][dw] & mask)
            << "queue " << q << " xcc " << x << " dword " << dw;
      }
}

// ---- hqds (FACTS §12.2, §18)
// -----------------------------------------------------------------------

std::vector<std::string> non_register_lines(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& l : lines(text))
    if (!l.starts_with("    ")) out.push_back(l);
  return out;
}

TEST(SimDeviceRender, Facts12_2_HqdsShapeAndWindowAddress) {
  Rig r;
  five_queues(r);
  auto l = lines(r.dev->render_files().at(kHqds));
  ASSERT_FALSE(l.empty());
  EXPECT_EQ(l[0], "Node 2, gpu_id f7bc:");
  EXPECT_EQ(l[1], "   Inst 0, HIQ on MEC 2 Pipe 0 Queue 0");
  EXPECT_EQ(l[2].substr(0, 14), "    0000c914: ");
  std::size_t cp = 0, hiq = 0, sdma = 0;
  for (const auto& s : l) {
    if (s.starts_with(" Inst ") && s.find(",  CP Pipe ") != std::string::npos) ++cp;
    if (s.find("HIQ on MEC") != std::string::npos) ++hiq;
    if (s.starts_with("  SDMA Engine ")) ++sdma;
    if (s.starts_with("    ")) {
      EXPECT_TRUE(std::regex_match(s, kHexRow4)) << s;
    }
  }
  EXPECT_EQ(hiq, 4u);
  EXPECT_EQ(cp, 4u * 24u);
  EXPECT_EQ(sdma, 8u * 8u);
}

// Splits hqds text into (header line, register lines) blocks.
std::vector<std::pair<std::string, std::vector<std::string>>> blocks(const std::string& text) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const auto& l : lines(text)) {
    if (!l.starts_with("    ")) {
      out.emplace_back(l, std::vector<std::string>{});
    } else if (!out.empty()) {
      out.back().second.push_back(l);
    }
  }
  return out;
}

TEST(SimDeviceRender, Facts18_IdleHqdsMatchCaptureLineForLine) {
  GPREEMPT_REQUIRE_SHARED();
  Rig r;  // MI308X, nothing mapped
  const auto ours = r.dev->render_files().at(kHqds);
  const auto cap = real_capture("02_mi308x_rocm702_hqds_baseline_node2.txt");
  EXPECT_EQ(non_register_lines(ours), non_register_lines(cap));
  const auto a = blocks(ours), b = blocks(cap);
  ASSERT_EQ(a.size(), b.size());
  // Blocks the capture shows idle (a CP slot with no MQD address, an SDMA RLC with the reset
  // RB_CNTL) and every HIQ block are byte-identical to ours; the baseline also had stale state of
  // an earlier process in a few slots, which an empty simulated machine does not have.
  std::size_t compared = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].first, b[i].first);
    ASSERT_EQ(a[i].second.size(), b[i].second.size()) << a[i].first;
    for (std::size_t k = 0; k < a[i].second.size(); ++k)
      EXPECT_EQ(a[i].second[k].substr(0, 14), b[i].second[k].substr(0, 14)) << a[i].first;
    if (b[i].second.empty()) continue;
    const std::string first = b[i].second[0].substr(14, 8);
    const bool idle = (b[i].first.find("CP Pipe") != std::string::npos && first == "00000000") ||
                      (b[i].first.find("SDMA") != std::string::npos && first == "00040000") ||
                      b[i].first.find("HIQ") != std::string::npos;
    if (!idle) continue;
    ++compared;
    EXPECT_EQ(a[i].second, b[i].second) << a[i].first;
  }
  // The baseline has 4 HIQs, 76 idle CP slots and 57 idle SDMA RLCs.
  EXPECT_EQ(compared, 4u + 76u + 57u);
}

TEST(SimDeviceRender, Facts18_ActiveHqdsFollowRunlistSlotsAsCaptured) {
  GPREEMPT_REQUIRE_SHARED();
  Rig r;
  five_queues(r);
  const auto ours = lines(r.dev->render_files().at(kHqds));
  const auto cap = lines(real_capture("01_mi308x_rocm702_hqds_full.txt"));
  // Capture 01: the five queues of pid 94314 sat at P0Q2 P1Q2 P2Q2 P3Q2 P0Q3 of every XCC, newest
  // queue first. Compare which slots are occupied (PQ_BASE non-zero) per XCC on node 2.
  auto occupied = [](const std::vector<std::string>& l) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i + 2 < l.size(); ++i) {
      if (l[i].starts_with("Node 3")) break;
      if (l[i].find(",  CP Pipe ") == std::string::npos) continue;
      if (l[i + 2].substr(14, 8) != "00000000") out.push_back(l[i]);
    }
    return out;
  };
  EXPECT_EQ(occupied(ours), occupied(cap));
}

TEST(SimDeviceRender, Facts12_2_SuspendedQueuesVanishFromSlots) {
  Rig r;
  five_queues(r);
  r.spawn(300);
  r.attach(300, kCapturedPid);
  r.snapshot(300, kCapturedPid);
  auto count_active = [&] {
    std::size_t n = 0;
    const auto l = lines(r.dev->render_files().at(kHqds));
    for (std::size_t i = 0; i + 1 < l.size(); ++i)
      if (l[i].find(",  CP Pipe ") != std::string::npos && l[i + 1].substr(32, 8) == "00000001")
        ++n;
    return n;
  };
  EXPECT_EQ(count_active(), 5u * 4u);
  std::vector<uint32_t> ids{0, 1};
  ASSERT_EQ(r.suspend(300, kCapturedPid, ids), 2);
  EXPECT_EQ(count_active(), 3u * 4u);
  auto mq = decode_mqds(r.dev->render_files().at(kMqds));
  EXPECT_EQ(mq[4][0][gpreempt::discovery::gfx9::mqd::cp_hqd_active], 0u) << "queue 0 (oldest)";
  EXPECT_EQ(mq[0][0][gpreempt::discovery::gfx9::mqd::cp_hqd_active], 1u);
}

// ---- rls (FACTS §12.3)
// -----------------------------------------------------------------------------

TEST(SimDeviceRender, Facts12_3_RlsNoActiveRunlistThenPackets) {
  Rig r;
  EXPECT_EQ(r.dev->render_files().at(kRls), "Node 2, gpu_id f7bc:\n  No active runlist\n");
  five_queues(r);
  const auto l = lines(r.dev->render_files().at(kRls));
  ASSERT_GE(l.size(), 2u);
  EXPECT_EQ(l[0], "Node 2, gpu_id f7bc:");
  std::vector<uint32_t> ib;
  for (std::size_t i = 1; i < l.size(); ++i) {
    ASSERT_TRUE(std::regex_match(l[i], kHexRow2)) << l[i];
    std::istringstream in(l[i].substr(12));
    for (std::string w; in >> w;) ib.push_back(static_cast<uint32_t>(std::stoul(w, nullptr, 16)));
  }
  // MAP_PROCESS (Aldebaran layout, 21 dwords) then five MAP_QUEUES (7 dwords).
  ASSERT_EQ(ib.size(), 21u + 5u * 7u);
  EXPECT_EQ(ib[0], 0xC013A100u);
  EXPECT_EQ(ib[1] & 0xffff, 0x8000u) << "first PASID";
  EXPECT_EQ((ib[13] >> 22) & 0x3ff, 5u) << "num_queues";
  for (int q = 0; q < 5; ++q) {
    const uint32_t* p = &ib[21 + q * 7];
    EXPECT_EQ(p[0], 0xC005A200u);
    EXPECT_EQ((p[2] >> 2) & 0x3ffffff, 0x1000u + 2u * (4 - q)) << "newest queue first";
  }
  // All suspended: the runlist is gone.
  r.spawn(300);
  r.attach(300, kCapturedPid);
  r.snapshot(300, kCapturedPid);
  std::vector<uint32_t> ids{0, 1, 2, 3, 4};
  ASSERT_EQ(r.suspend(300, kCapturedPid, ids), 5);
  EXPECT_EQ(r.dev->render_files().at(kRls), "Node 2, gpu_id f7bc:\n  No active runlist\n");
}

}  // namespace
}  // namespace gpreempt::sim::testing

namespace gpreempt::sim::testing {
namespace {

std::vector<uint32_t> rls_dwords(const std::string& text) {
  std::vector<uint32_t> ib;
  for (const auto& l : lines(text)) {
    if (!l.starts_with("  0")) continue;
    std::istringstream in(l.substr(12));
    for (std::string w; in >> w;) ib.push_back(static_cast<uint32_t>(std::stoul(w, nullptr, 16)));
  }
  return ib;
}

TEST(SimDeviceRender, Facts12_3_RlsNewestProcessFirstSdmaEngineSelect) {
  Rig r;
  r.spawn(1000);
  r.new_queue(1000);
  r.spawn(2000);
  auto a = r.aql_queue(2000);
  a.queue_type = KFD_IOC_QUEUE_TYPE_SDMA;
  ASSERT_EQ(r.create(2000, a), 0);  // engine 0
  a = r.aql_queue(2000);
  a.queue_type = KFD_IOC_QUEUE_TYPE_SDMA_XGMI;
  ASSERT_EQ(r.create(2000, a), 0);  // first XGMI engine = 2: extended engine select
  auto ib = rls_dwords(r.dev->render_files().at(kRls));
  ASSERT_EQ(ib.size(), 21u + 2 * 7 + 21 + 7);
  EXPECT_EQ(ib[1] & 0xffff, 0x8001u) << "the process registered last comes first";
  const uint32_t xgmi = ib[21 + 1], sdma = ib[21 + 7 + 1];
  EXPECT_EQ((xgmi >> 2) & 3, 1u) << "extended_engine_sel sdma0..7";
  EXPECT_EQ((xgmi >> 26) & 7, 2u);
  EXPECT_EQ((sdma >> 2) & 3, 0u);
  EXPECT_EQ((sdma >> 26) & 7, 2u) << "engine_sel sdma0";
  EXPECT_EQ(ib[35 + 1] & 0xffff, 0x8000u);
  const uint32_t compute = ib[35 + 21 + 1];
  EXPECT_EQ((compute >> 26) & 7, 0u) << "compute";
  EXPECT_EQ((compute >> 4) & 3, 1u) << "HWS chooses the slot";
}

TEST(SimDeviceRender, Facts12_3_OversubscribedRunlistChains) {
  Rig r;
  r.spawn(kCapturedPid);
  for (uint32_t i = 0; i <= r.profile_.num_cp_queues; ++i) r.new_queue(kCapturedPid);
  auto ib = rls_dwords(r.dev->render_files().at(kRls));
  ASSERT_EQ(ib.size(), 21u + (r.profile_.num_cp_queues + 1) * 7 + 4);
  const std::size_t tail = ib.size() - 4;
  EXPECT_EQ(ib[tail], 0xC002A500u) << "RUN_LIST";
  EXPECT_EQ(ib[tail + 3] & 0xfffff, ib.size()) << "chained IB size in dwords";
  EXPECT_EQ((ib[tail + 3] >> 20) & 1, 1u) << "chain";
  // Only the CP slots are resident in hqds: 24 per XCC.
  std::size_t active = 0;
  const auto l = lines(r.dev->render_files().at(kHqds));
  for (std::size_t i = 0; i + 1 < l.size(); ++i)
    if (l[i].find(",  CP Pipe ") != std::string::npos && l[i + 1].substr(32, 8) == "00000001")
      ++active;
  EXPECT_EQ(active, r.profile_.num_cp_queues * 4);
}

TEST(SimDeviceRender, Facts12_2_VmidPerProcessInRunlistOrder) {
  Rig r;
  r.spawn(1000);
  r.new_queue(1000);
  r.spawn(2000);
  r.new_queue(2000);
  const auto l = lines(r.dev->render_files().at(kHqds));
  // P0Q2 holds the newest process (2000, first VMID), P1Q2 the older one.
  auto vmid_of = [&](const std::string& header) {
    for (std::size_t i = 0; i + 1 < l.size(); ++i)
      if (l[i] == header) return l[i + 1].substr(41, 8);
    return std::string("missing");
  };
  EXPECT_EQ(vmid_of(" Inst 0,  CP Pipe 0, Queue 2"), "00000303");
  EXPECT_EQ(vmid_of(" Inst 0,  CP Pipe 1, Queue 2"), "00000404");
  EXPECT_EQ(vmid_of(" Inst 0,  CP Pipe 2, Queue 2"), "00000000");
}

TEST(SimDeviceRender, Mi210SingleXccShapes) {
  Rig r({}, "mi210");
  r.spawn(kCapturedPid);
  r.new_queue(kCapturedPid);
  auto f = r.dev->render_files();
  auto m = lines(f.at(kMqds));
  EXPECT_EQ(m.size(), 1u + 1 + 64);
  auto h = lines(f.at(kHqds));
  EXPECT_EQ(h[0], "Node 1, gpu_id 6699:");
  EXPECT_EQ(h[2].substr(0, 14), "    0000fea4: ");
  EXPECT_EQ(f.at("sys/class/kfd/kfd/topology/nodes/1/name"), "aldebaran\n");
}

}  // namespace
}  // namespace gpreempt::sim::testing

namespace gpreempt::sim::testing {
namespace {

TEST(SimDeviceRender, Facts12_3_NoRunlistWithoutHws) {
  DeviceOptions o;
  o.sched_policy = 2;
  Rig r(o);
  five_queues(r);
  EXPECT_EQ(r.dev->render_files().at(kRls), "Node 2, gpu_id f7bc:\n  No active runlist\n");
}

// ---- parts (kfdsimd renders only what a lookup reaches) ---------------------------------------

// Every part is byte for byte what the full render shows at its device path, and the parts
// together are the full render: a lazy reader sees exactly the files an eager one would.
TEST(SimDeviceRender, PartsAreTheFullRenderSplitByPath) {
  Rig r({}, "mi308x", 2);
  five_queues(r);
  r.spawn(kCapturedPid + 1);  // a KFD process without queues: proc/<pid>/queues/ is an empty directory
  ASSERT_EQ(r.runtime_enable(kCapturedPid + 1), 0);
  const uint32_t gone = r.new_queue(kCapturedPid + 1);
  ASSERT_EQ(r.destroy(kCapturedPid + 1, gone), 0);
  const auto full = r.dev->render_files();
  const std::string cls = "sys/class/kfd/kfd/", dev = "sys/devices/virtual/kfd/kfd/";
  // The full render as it lands on disk: the class entries are the device's (a symlink).
  std::map<std::string, std::string> expected;
  for (const auto& [k, v] : full) {
    if (k.rfind(cls, 0) == 0) {
      ASSERT_EQ(full.at(dev + k.substr(cls.size())), v) << k;
      continue;
    }
    if (k.rfind("sys/dev/char/", 0) == 0) continue;
    expected[k] = v;
  }
  std::map<std::string, std::string> joined;
  for (FilePart part : {FilePart::kTopology, FilePart::kProcesses, FilePart::kMqds, FilePart::kHqds,
                        FilePart::kRls})
    for (const auto& [k, v] : r.dev->render_files(part)) {
      EXPECT_TRUE(joined.emplace(k, v).second) << k << " in two parts";
      if (k != dev + "proc/") {
        EXPECT_EQ(full.count(k), 1u) << k << " is not in the full render";
      }
    }
  // The full render names proc/ only when it is empty; the part always does.
  expected[dev + "proc/"] = "";
  EXPECT_EQ(joined, expected);
  // One process's directory is its slice of proc/, nothing more.
  for (int pid : {kCapturedPid, kCapturedPid + 1}) {
    const std::string prefix = dev + "proc/" + std::to_string(pid) + "/";
    std::map<std::string, std::string> slice;
    for (const auto& [k, v] : full)
      if (k.rfind(prefix, 0) == 0) slice[k] = v;
    EXPECT_FALSE(slice.empty());
    EXPECT_EQ(r.dev->render_files(FilePart::kProcess, pid), slice) << pid;
  }
  EXPECT_TRUE(r.dev->render_files(FilePart::kProcess, 4242).empty()) << "no such process: nothing";
}

}  // namespace
}  // namespace gpreempt::sim::testing
