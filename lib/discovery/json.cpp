#include "discovery/json.h"

#include <cstdio>

#include "common/json_conventions.h"

namespace gpreempt::discovery {

using nlohmann::ordered_json;
using json_conventions::address;
using json_conventions::address_or_null;

std::string gpu_id_hex(std::uint32_t gpu_id) {
  char b[12];
  std::snprintf(b, sizeof b, "%x", gpu_id);
  return b;
}

namespace {
ordered_json diagnostics_json(const std::vector<Diagnostic>& ds) {
  ordered_json a = ordered_json::array();
  for (const auto& d : ds) a.push_back(to_json(d));
  return a;
}
template <class T>
ordered_json opt(const std::optional<T>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}
}  // namespace

ordered_json to_json(const Diagnostic& d) {
  return {{"file", d.file}, {"line", d.line}, {"message", d.message}};
}

ordered_json to_json(const TopologyProperties& p) {
  ordered_json props = ordered_json::object();
  for (const auto& [k, v] : p.properties) props[k] = v;
  return {{"properties", props},
          {"gpu", p.gpu},
          {"compute_units", opt(p.compute_units)},
          {"gfx_target", opt(p.gfx_target)},
          {"num_xcc", opt(p.num_xcc)},
          {"complete", p.complete},
          {"diagnostics", diagnostics_json(p.diagnostics)}};
}

ordered_json to_json(const QueueDescriptor& d) {
  ordered_json j;
  if (d.header) j["header"] = address(*d.header);
  j["mqd_base"] = address(d.mqd_base);
  j["active"] = d.active;
  j["vmid"] = d.vmid;
  j["persistent_state"] = address(d.persistent_state);
  j["pipe_priority"] = d.pipe_priority;
  j["queue_priority"] = d.queue_priority;
  j["quantum"] = address(d.quantum);
  j["ring_base"] = address(d.ring_base);
  j["ring_size_bytes"] = d.ring_size;
  j["rptr"] = d.rptr;
  j["wptr"] = d.wptr;
  j["rptr_report_address"] = address(d.rptr_report_address);
  j["wptr_poll_address"] = address(d.wptr_poll_address);
  j["doorbell_control"] = address(d.doorbell_control);
  j["doorbell_offset"] = d.doorbell_offset;
  j["doorbell_enabled"] = d.doorbell_enabled;
  j["pq_control"] = address(d.pq_control);
  j["eop_base"] = address(d.eop_base);
  j["ctx_save_base"] = address(d.ctx_save_base);
  j["ctx_save_size_bytes"] = d.ctx_save_size;
  j["cntl_stack_size_bytes"] = d.cntl_stack_size;
  j["cntl_stack_offset"] = d.cntl_stack_offset;
  j["wg_state_offset"] = d.wg_state_offset;
  return j;
}

ordered_json to_json(const MqdsDump& m) {
  ordered_json procs = ordered_json::array();
  for (const auto& p : m.processes) {
    ordered_json queues = ordered_json::array();
    for (const auto& q : p.queues) {
      ordered_json copies = ordered_json::array();
      for (const auto& c : q.xcc_copies) {
        ordered_json cj;
        if (c.sdma) {
          cj = {{"xcc", c.xcc},
                {"engine_id", c.sdma->engine_id},
                {"queue_id", c.sdma->queue_id},
                {"ring_base", address(c.sdma->ring_base)},
                {"rptr_report_address", address(c.sdma->rptr_report_address)}};
        } else {
          cj = {{"xcc", c.xcc}};
          cj.update(to_json(c.compute));
        }
        cj["dump_bytes"] = c.bytes;
        cj["complete"] = c.complete;
        copies.push_back(std::move(cj));
      }
      ordered_json qj = {{"type", q.type}, {"gpu_id", q.gpu_id}, {"line", q.line}};
      if (q.raw_type) qj["raw_type"] = *q.raw_type;
      qj["xcc_copies"] = std::move(copies);
      qj["complete"] = q.complete;
      queues.push_back(std::move(qj));
    }
    procs.push_back({{"pid", p.pid}, {"pasid", p.pasid}, {"line", p.line}, {"queues", std::move(queues)}});
  }
  return {{"processes", std::move(procs)},
          {"complete", m.complete},
          {"diagnostics", diagnostics_json(m.diagnostics)}};
}

ordered_json to_json(const HqdsDump& h) {
  ordered_json nodes = ordered_json::array();
  for (const auto& n : h.nodes) {
    ordered_json slots = ordered_json::array();
    for (const auto& s : n.slots) {
      ordered_json sj = {{"kind", s.kind}, {"xcc", s.xcc}};
      if (s.kind == "SDMA") {
        sj["engine"] = s.pipe;
        sj["rlc"] = s.queue;
      } else {
        if (s.kind == "HIQ") sj["mec"] = s.mec;
        sj["pipe"] = s.pipe;
        sj["queue"] = s.queue;
      }
      sj["active"] = opt(s.active);
      sj["line"] = s.line;
      if (s.decoded) sj["registers"] = to_json(*s.decoded);
      sj["complete"] = s.complete;
      slots.push_back(std::move(sj));
    }
    nodes.push_back({{"node", n.node},
                     {"gpu_id", n.gpu_id},
                     {"stopped", n.stopped},
                     {"slots", std::move(slots)}});
  }
  return {{"nodes", std::move(nodes)},
          {"complete", h.complete},
          {"diagnostics", diagnostics_json(h.diagnostics)}};
}

ordered_json to_json(const RlsDump& r) {
  ordered_json nodes = ordered_json::array();
  for (const auto& n : r.nodes) {
    ordered_json packets = ordered_json::array();
    for (const auto& p : n.packets) {
      ordered_json pj = {{"offset_bytes", p.dword_offset * 4},
                         {"opcode", p.opcode_name},
                         {"dwords", p.dwords},
                         {"header", address(p.header)}};
      for (const auto& f : p.fields) pj[f.name] = f.address ? ordered_json(address(f.value)) : ordered_json(f.value);
      pj["complete"] = p.complete;
      packets.push_back(std::move(pj));
    }
    nodes.push_back({{"node", n.node},
                     {"gpu_id", n.gpu_id},
                     {"active_runlist", n.active_runlist},
                     {"ib_dwords", n.ib_dwords},
                     {"packets", std::move(packets)},
                     {"padding_dwords", n.padding_dwords},
                     {"complete", n.complete}});
  }
  return {{"nodes", std::move(nodes)},
          {"complete", r.complete},
          {"diagnostics", diagnostics_json(r.diagnostics)}};
}

ordered_json to_json(const QueueMap& m) {
  ordered_json rows = ordered_json::array();
  for (const auto& r : m.queues) {
    ordered_json slots = ordered_json::array();
    for (const auto& s : r.hw_slots)
      slots.push_back({{"xcc", s.xcc}, {"pipe", s.pipe}, {"queue", s.queue}, {"active", s.active}});
    ordered_json hwq = ordered_json::array();
    for (auto a : r.hwq) hwq.push_back(address(a));
    ordered_json mqd = ordered_json::array();
    for (auto a : r.mqd_bases) mqd.push_back(address(a));
    rows.push_back({{"pid", opt(r.pid)},
                    {"queue_id", opt(r.queue_id)},
                    {"queue_id_inferred", r.queue_id_inferred},
                    {"gpu_id", r.gpu_id},
                    {"type", r.type},
                    {"ring_base", address_or_null(r.ring_base)},
                    {"ring_size_bytes", opt(r.ring_size)},
                    {"rptr_address", address_or_null(r.rptr_address)},
                    {"wptr_address", address_or_null(r.wptr_address)},
                    {"pipe_priority", opt(r.pipe_priority)},
                    {"queue_priority", opt(r.queue_priority)},
                    {"mqd_bases", std::move(mqd)},
                    {"hw_slots", std::move(slots)},
                    {"in_runlist", opt(r.in_runlist)},
                    {"doorbell_offset", opt(r.doorbell_offset)},
                    {"hwq", std::move(hwq)},
                    {"sources", r.sources}});
  }
  return {{"queues", std::move(rows)}, {"notes", m.notes}};
}

ordered_json to_json(const ProcessInfo& p) {
  ordered_json queues = ordered_json::array();
  for (const auto& q : p.queues)
    queues.push_back({{"queue_id", q.queue_id},
                      {"gpu_id", q.gpu_id},
                      {"type", q.type},
                      {"ring_size_bytes", opt(q.ring_size)}});
  return {{"pid", p.pid},
          {"container_pid", opt(p.container_pid)},
          {"nspid", p.nspid},
          {"container_id", opt(p.container_id)},
          {"cmdline", p.cmdline},
          {"kfd_open", p.has_kfd_open},
          {"kfd_sysfs", p.has_kfd_sysfs},
          {"queues", std::move(queues)},
          {"problems", p.problems}};
}

ordered_json to_json(const WatchEvent& e) {
  ordered_json j = {{"event", e.kind}, {"pid", e.pid}, {"container_pid", opt(e.container_pid)}};
  if (e.queue_id) {
    j["queue_id"] = *e.queue_id;
    j["gpu_id"] = e.gpu_id.value_or(0);
    j["type"] = e.queue_type;
  } else {
    j["cmdline"] = e.cmdline;
  }
  return j;
}

}  // namespace gpreempt::discovery
