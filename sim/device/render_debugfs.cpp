// debugfs files of the simulated machine (/sys/kernel/debug/kfd): `mqds`, `hqds` and `rls`
// (docs/kfd-interface.md#debugfs), rendered from the current runlist in the kernel's formats.
// MQD field indices and PM4 packet layouts come from lib/discovery, which decodes these files:
// both sides share one definition.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "debugfs_format.h"
#include "device_state.h"
#include "mqd_builder.h"

namespace gpreempt::sim {

namespace {

std::string hex(const char* fmt, uint32_t v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Where the packet manager's runlist IB lives (GTT, kernel-owned); one per device.
uint64_t runlist_ib_addr(uint32_t gpu_index) {
  return 0x00000000006f8000ull + gpu_index * 0x10000;
}

}  // namespace

std::vector<KfdDevice::State::RunlistProcess> KfdDevice::State::runlist_of(uint32_t gpu_id) const {
  std::vector<RunlistProcess> out;
  std::vector<std::pair<uint64_t, const detail::Process*>> procs;
  for (const auto& [pid, p] : processes)
    for (const auto& d : p->devices)
      if (d.gpu_id == gpu_id && d.queue_count > 0) procs.emplace_back(d.registered_seq, p.get());
  std::sort(procs.begin(), procs.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [seq, p] : procs) {
    RunlistProcess e;
    e.process = p;
    for (const auto& q : p->queues) {
      if (q.gpu_id != gpu_id) continue;
      ++e.queue_count;
      if (q.active()) e.active.push_back(&q);
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::string KfdDevice::State::render_mqds() const {
  std::string s;
  for (const auto& [pid, p] : processes) {
    // Newest kernels print (tgid, lead thread pid); the lead thread's pid is the tgid.
    s += "Process " + std::to_string(pid) + " PASID " + std::to_string(pid) + ":\n";
    for (const auto& q : p->queues) {
      if (q.is_sdma()) {
        s += hex("  SDMA queue on device %x\n", q.gpu_id);
        s += seq_hex_dump("    ", detail::build_sdma_mqd(profile, *p, q));
      } else {
        s += hex("  Compute queue on device %x\n", q.gpu_id);
        for (uint32_t xcc = 0; xcc < profile.num_xcc; ++xcc)
          s += seq_hex_dump("    ", detail::build_compute_mqd(profile, *p, q, xcc));
      }
    }
  }
  return s;
}

std::string KfdDevice::State::render_hqds() const {
  std::string s;
  const uint32_t queues_per_pipe = profile.queues_per_pipe - profile.first_kfd_queue;
  const uint32_t slots = profile.pipes_per_mec * queues_per_pipe;
  uint32_t node = profile.cpu_nodes;
  for (const auto& g : profile.gpus) {
    s += "Node " + std::to_string(node++) + hex(", gpu_id %x:\n", g.gpu_id);
    // The firmware places the runlist's compute queues round-robin over the pipes, queue slots
    // from first_kfd_queue up (realdata 01: five queues -> P0Q2 P1Q2 P2Q2 P3Q2 P0Q3, in
    // MAP_QUEUES order); queues beyond the slots are time-sliced and not resident. VMIDs are
    // handed out per process in runlist order.
    struct Resident {
      const detail::Process* p;
      const detail::Queue* q;
      uint32_t vmid;
    };
    std::vector<Resident> compute, sdma;
    uint32_t vmid = profile.first_vmid;
    for (const auto& e : runlist_of(g.gpu_id)) {
      for (const auto* q : e.active) {
        if (q->is_sdma())
          sdma.push_back({e.process, q, vmid});
        else if (compute.size() < slots)
          compute.push_back({e.process, q, vmid});
      }
      ++vmid;
    }
    for (uint32_t xcc = 0; xcc < profile.num_xcc; ++xcc) {
      const uint32_t base = profile.hqd_reg_base + profile.xcc_reg_offsets.at(xcc);
      s += "   Inst " + std::to_string(xcc) + ", HIQ on MEC " +
           std::to_string(4 / profile.pipes_per_mec + 1) + " Pipe " +
           std::to_string(4 % profile.pipes_per_mec) + " Queue 0\n";
      s += seq_reg_dump(register_run(base, detail::hiq_registers(xcc)));
      for (uint32_t pipe = 0; pipe < profile.pipes_per_mec; ++pipe)
        for (uint32_t queue = profile.first_kfd_queue; queue < profile.queues_per_pipe; ++queue) {
          s += " Inst " + std::to_string(xcc) + ",  CP Pipe " + std::to_string(pipe) + ", Queue " +
               std::to_string(queue) + "\n";
          const uint32_t slot = (queue - profile.first_kfd_queue) * profile.pipes_per_mec + pipe;
          const auto regs = slot < compute.size() ? detail::mapped_hqd_registers(
                                                        profile, *compute[slot].p, *compute[slot].q,
                                                        xcc, compute[slot].vmid)
                                                  : detail::idle_hqd_registers();
          s += seq_reg_dump(register_run(base, regs));
        }
    }
    const uint32_t engines = profile.num_sdma_engines + profile.num_sdma_xgmi_engines;
    for (uint32_t engine = 0; engine < engines; ++engine)
      for (uint32_t rlc = 0; rlc < profile.num_sdma_queues_per_engine; ++rlc) {
        s += "  SDMA Engine " + std::to_string(engine) + ", RLC " + std::to_string(rlc) + "\n";
        const Resident* r = nullptr;
        for (const auto& x : sdma)
          if (x.q->sdma_engine == engine && x.q->sdma_queue == rlc) r = &x;
        const uint32_t base = profile.sdma_reg_bases.at(engine) + rlc * profile.sdma_rlc_stride;
        s += seq_reg_dump(detail::sdma_rlc_registers(base, profile, r ? r->p : nullptr,
                                                     r ? r->q : nullptr, r ? r->vmid : 0));
      }
  }
  return s;
}

std::string KfdDevice::State::render_rls() const {
  std::string s;
  uint32_t node = profile.cpu_nodes;
  for (std::size_t i = 0; i < profile.gpus.size(); ++i) {
    const auto& g = profile.gpus[i];
    s += "Node " + std::to_string(node++) + hex(", gpu_id %x:\n", g.gpu_id);
    std::vector<detail::RunlistEntry> rl;
    std::size_t active = 0;
    for (const auto& e : runlist_of(g.gpu_id)) {
      rl.push_back({e.process, e.active, e.queue_count});
      active += e.active.size();
    }
    // map_queues_cpsch() builds no runlist without active queues, and the unmap that took the
    // last one away released the IB: "No active runlist". Without HWS (sched_policy 2) the
    // packet manager never builds one.
    if (active == 0 || options.sched_policy == 2) {
      s += "  No active runlist\n";
      continue;
    }
    s += seq_hex_dump(
        "  ", detail::build_runlist_ib(profile, rl, runlist_ib_addr(static_cast<uint32_t>(i))));
  }
  return s;
}

}  // namespace gpreempt::sim
