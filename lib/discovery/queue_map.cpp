#include "discovery/queue_map.h"

#include <algorithm>
#include <map>
#include <set>

#include "discovery/gfx9_mqd_layout.h"
#include "discovery/pm4_packets.h"
#include "discovery/text_scan.h"

namespace gpreempt::discovery {

namespace {

void add_source(QueueMapRow& r, const char* s) {
  if (std::find(r.sources.begin(), r.sources.end(), s) == r.sources.end()) r.sources.push_back(s);
}

QueueMapRow row_from_mqds(int pid, const MqdsQueue& q) {
  QueueMapRow r;
  r.pid = pid;
  r.gpu_id = q.gpu_id;
  r.type = q.type;
  add_source(r, "mqds");
  if (q.xcc_copies.empty()) return r;
  const MqdCopy& c0 = q.xcc_copies.front();
  if (q.type == "sdma" && c0.sdma) {
    r.ring_base = c0.sdma->ring_base;
    r.rptr_address = c0.sdma->rptr_report_address;
    return r;
  }
  const QueueDescriptor& d = c0.compute;
  r.ring_base = d.ring_base;
  r.ring_size = d.ring_size;
  r.rptr_address = d.rptr_report_address;
  r.wptr_address = d.wptr_poll_address;
  r.pipe_priority = d.pipe_priority;
  r.queue_priority = d.queue_priority;
  r.doorbell_offset = d.doorbell_offset;
  for (const auto& c : q.xcc_copies) r.mqd_bases.push_back(c.compute.mqd_base);
  return r;
}

}  // namespace

QueueMap build_queue_map(const QueueMapInputs& in) {
  QueueMap out;
  std::vector<QueueMapRow> rows;

  // 1. Queues from debugfs mqds, ids inferred from list order (newest first, ids from a bitmap
  //    handed out lowest-first: with no destroyed queues the last listed is id 0).
  if (in.mqds) {
    for (const auto& p : in.mqds->processes) {
      const std::size_t n = p.queues.size();
      for (std::size_t i = 0; i < n; ++i) {
        QueueMapRow r = row_from_mqds(p.pid, p.queues[i]);
        r.queue_id = static_cast<std::uint32_t>(n - 1 - i);
        r.queue_id_inferred = true;
        rows.push_back(std::move(r));
      }
    }
  }

  // 2. Known queues (sysfs / snapshot): attach real ids. Snapshot rows carry a ring base, the
  //    exact key; sysfs rows only id/gpu/type, so they are paired with the debugfs rows of the
  //    same process by creation order and the pairing stays marked as inferred.
  std::map<int, std::vector<const KnownQueue*>> known_by_pid;
  for (const auto& k : in.known) known_by_pid[k.pid].push_back(&k);
  std::vector<QueueMapRow> known_only;
  for (auto& [pid, list] : known_by_pid) {
    std::sort(list.begin(), list.end(),
              [](const KnownQueue* a, const KnownQueue* b) { return a->queue_id < b->queue_id; });
    std::vector<std::size_t> debugfs_rows;  // indices of this pid's mqds rows, oldest first
    for (std::size_t i = rows.size(); i-- > 0;)
      if (rows[i].pid == pid) debugfs_rows.push_back(i);
    const bool same_count = debugfs_rows.size() == list.size();
    std::set<std::size_t> claimed;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const KnownQueue& k = *list[i];
      std::optional<std::size_t> match;
      bool by_address = false;
      if (k.ring_base) {
        for (std::size_t ri : debugfs_rows)
          if (!claimed.count(ri) && rows[ri].gpu_id == k.gpu_id && rows[ri].ring_base == k.ring_base) {
            match = ri;
            by_address = true;
          }
      } else if (same_count && !claimed.count(debugfs_rows[i]) &&
                 rows[debugfs_rows[i]].gpu_id == k.gpu_id) {
        match = debugfs_rows[i];
      }
      if (!match) {
        QueueMapRow r;
        r.pid = k.pid;
        r.gpu_id = k.gpu_id;
        r.type = k.type;
        r.ring_base = k.ring_base;
        r.ring_size = k.ring_size;
        r.rptr_address = k.rptr_address;
        r.wptr_address = k.wptr_address;
        r.queue_id = k.queue_id;
        add_source(r, k.source.c_str());
        known_only.push_back(std::move(r));
        continue;
      }
      claimed.insert(*match);
      QueueMapRow& m = rows[*match];
      m.queue_id = k.queue_id;
      m.queue_id_inferred = !by_address;
      if (k.ring_size && !m.ring_size) m.ring_size = k.ring_size;
      add_source(m, k.source.c_str());
    }
    if (!list.empty() && !same_count && !debugfs_rows.empty() && !list.front()->ring_base)
      out.notes.push_back("pid " + std::to_string(pid) + ": " + std::to_string(list.size()) +
                          " queues in sysfs but " + std::to_string(debugfs_rows.size()) +
                          " in debugfs mqds; ids not paired with debugfs queues");
  }
  for (auto& r : known_only) rows.push_back(std::move(r));

  // 3. HQD slots: match active (and inactive but still programmed) CP slots on the MQD base of a
  //    per-XCC copy; queues known only from sysfs/snapshot match on ring base + rptr address.
  if (in.hqds) {
    std::map<std::pair<std::uint32_t, std::uint64_t>, QueueMapRow*> by_mqd;
    for (auto& r : rows)
      for (auto b : r.mqd_bases)
        if (b) by_mqd[{r.gpu_id, b}] = &r;
    std::vector<QueueMapRow> hqd_only;
    hqd_only.reserve(256);
    for (const auto& node : in.hqds->nodes) {
      for (const auto& s : node.slots) {
        if (s.kind != "CP" || s.registers.size() < gfx9::hqd::kRegisterCount) continue;
        std::vector<std::uint32_t> w;
        for (auto& [a, v] : s.registers) w.push_back(v);
        const QueueDescriptor d = decode_hqd_window(w);
        if (d.mqd_base == 0 && d.ring_base == 0) continue;  // never programmed
        HwSlot slot{s.xcc, s.pipe, s.queue, d.active};
        QueueMapRow* r = nullptr;
        if (auto it = by_mqd.find({node.gpu_id, d.mqd_base}); it != by_mqd.end()) r = it->second;
        if (!r)
          for (auto& cand : rows)
            if (cand.gpu_id == node.gpu_id && cand.ring_base && *cand.ring_base == d.ring_base &&
                cand.rptr_address && *cand.rptr_address == d.rptr_report_address)
              r = &cand;
        if (!r && d.active) {
          for (auto& cand : hqd_only)
            if (cand.gpu_id == node.gpu_id && cand.ring_base == d.ring_base) r = &cand;
          if (!r) {
            QueueMapRow nr;
            nr.gpu_id = node.gpu_id;
            nr.type = "compute";
            nr.ring_base = d.ring_base;
            nr.ring_size = d.ring_size;
            nr.rptr_address = d.rptr_report_address;
            nr.wptr_address = d.wptr_poll_address;
            nr.pipe_priority = d.pipe_priority;
            nr.queue_priority = d.queue_priority;
            nr.doorbell_offset = d.doorbell_offset;
            hqd_only.push_back(std::move(nr));
            r = &hqd_only.back();
          }
          r->mqd_bases.push_back(d.mqd_base);
        }
        if (!r) continue;
        r->hw_slots.push_back(slot);
        add_source(*r, "hqds");
      }
    }
    if (!hqd_only.empty())
      out.notes.push_back(std::to_string(hqd_only.size()) +
                          " active hardware queue(s) belong to no process in the other sources "
                          "(pid unknown)");
    for (auto& r : hqd_only) rows.push_back(std::move(r));
  }

  // 4. Runlist: MAP_QUEUES carries the MQD address (first XCC copy) and the wptr poll address.
  if (in.rls) {
    for (auto& r : rows) r.in_runlist = false;
    for (const auto& node : in.rls->nodes)
      for (const auto& p : node.packets) {
        if (p.opcode != pm4::opcode::MAP_QUEUES) continue;
        const auto mqd = p.field("mqd_address");
        const auto wptr = p.field("wptr_address");
        for (auto& r : rows) {
          if (r.gpu_id != node.gpu_id) continue;
          const bool hit = (mqd && std::find(r.mqd_bases.begin(), r.mqd_bases.end(), *mqd) != r.mqd_bases.end()) ||
                           (wptr && r.wptr_address && *r.wptr_address == *wptr && *wptr != 0);
          if (!hit) continue;
          r.in_runlist = true;
          if (auto db = p.field("doorbell_offset")) r.doorbell_offset = static_cast<std::uint32_t>(*db);
          add_source(r, "rls");
        }
      }
  }

  // 5. HIP log HWq: ROCr's amd_queue_t address; its read_dispatch_id (+0x80) is the rptr address.
  std::size_t unmatched = 0;
  for (const auto& q : in.log_queues) {
    bool hit = false;
    for (auto& r : rows) {
      if (!r.rptr_address || *r.rptr_address != q.address + gfx9::kAmdQueueReadDispatchIdOffset) continue;
      if (q.pid && r.pid && *q.pid != *r.pid) continue;
      if (std::find(r.hwq.begin(), r.hwq.end(), q.address) == r.hwq.end()) r.hwq.push_back(q.address);
      add_source(r, "log");
      hit = true;
    }
    if (!hit) ++unmatched;
  }
  if (unmatched)
    out.notes.push_back(std::to_string(unmatched) +
                        " HWq address(es) from the log match no queue's read-pointer address (HWq + 0x80)");

  if (in.pid) {
    std::erase_if(rows, [&](const QueueMapRow& r) { return !r.pid || *r.pid != *in.pid; });
  }
  std::stable_sort(rows.begin(), rows.end(), [](const QueueMapRow& a, const QueueMapRow& b) {
    if (a.pid != b.pid) return a.pid.value_or(-1) < b.pid.value_or(-1);
    if (a.gpu_id != b.gpu_id) return a.gpu_id < b.gpu_id;
    return a.queue_id.value_or(~0u) < b.queue_id.value_or(~0u);
  });
  for (auto& r : rows)
    std::sort(r.hw_slots.begin(), r.hw_slots.end(), [](const HwSlot& a, const HwSlot& b) {
      return std::tie(a.xcc, a.pipe, a.queue) < std::tie(b.xcc, b.pipe, b.queue);
    });
  if (in.mqds && in.known.empty())
    out.notes.push_back("queue ids inferred from creation order in debugfs mqds (newest first); "
                        "attach or read /sys/class/kfd/kfd/proc/<pid>/queues for real ids");
  out.queues = std::move(rows);
  return out;
}

}  // namespace gpreempt::discovery
