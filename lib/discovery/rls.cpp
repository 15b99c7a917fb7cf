#include "discovery/rls.h"

#include <cstdio>

#include "discovery/hqds.h"
#include "discovery/pm4_packets.h"
#include "discovery/text_scan.h"

namespace gpreempt::discovery {

std::optional<std::uint64_t> Pm4Packet::field(std::string_view n) const {
  for (const auto& f : fields)
    if (f.name == n) return f.value;
  return std::nullopt;
}

namespace {

using pm4::Field;

struct Emit {
  const std::vector<std::uint32_t>& dw;
  std::vector<Pm4Field>& out;
  void operator()(const char* name, const Field& f) const {
    if (f.dword < dw.size()) out.push_back({name, f.get(dw[f.dword]), false});
  }
  void address(const char* name, const Field& lo, const Field& hi, unsigned lo_shift = 0) const {
    if (hi.dword < dw.size())
      out.push_back({name,
                     (static_cast<std::uint64_t>(hi.get(dw[hi.dword])) << 32) |
                         (static_cast<std::uint64_t>(lo.get(dw[lo.dword])) << lo_shift),
                     true});
  }
};

}  // namespace

std::vector<Pm4Field> decode_pm4_fields(std::uint32_t opcode, const std::vector<std::uint32_t>& dw) {
  std::vector<Pm4Field> out;
  Emit e{dw, out};
  switch (opcode) {
    case pm4::opcode::MAP_PROCESS: {
      namespace m = pm4::map_process;
      e("pasid", m::pasid);
      e("debug_vmid", m::debug_vmid);
      e("new_debug", m::new_debug);
      e("diq_enable", m::diq_enable);
      e("process_quantum", m::process_quantum);
      e.address("page_table_base", m::page_table_base_lo, m::page_table_base_hi);
      e.address("sq_shader_tba", m::sq_shader_tba_lo, m::sq_shader_tba_hi);
      e.address("sq_shader_tma", m::sq_shader_tma_lo, m::sq_shader_tma_hi);
      e.address("gds_addr", m::gds_addr_lo, m::gds_addr_hi);
      e("num_gws", m::num_gws);
      e("sdma_enable", m::sdma_enable);
      e("num_oac", m::num_oac);
      e("gds_size", m::gds_size);
      e("num_queues", m::num_queues);
      const std::size_t cs = dw.size() >= m::kDwordsAldebaran ? m::completion_signal_lo_aldebaran
                                                              : m::completion_signal_lo;
      if (cs + 1 < dw.size())
        out.push_back({"completion_signal",
                       (static_cast<std::uint64_t>(dw[cs + 1]) << 32) | dw[cs], true});
      break;
    }
    case pm4::opcode::MAP_QUEUES: {
      namespace m = pm4::map_queues;
      e("queue_sel", m::queue_sel);
      e("extended_engine_sel", m::extended_engine_sel);
      e("vmid", m::vmid);
      e("queue", m::queue);
      e("pipe", m::pipe);
      e("me", m::me);
      e("gws_control_queue", m::gws_control_queue);
      e("queue_type", m::queue_type);
      e("engine_sel", m::engine_sel);
      e("num_queues", m::num_queues);
      e("check_disable", m::check_disable);
      e("doorbell_offset", m::doorbell_offset);
      e.address("mqd_address", m::mqd_addr_lo, m::mqd_addr_hi);
      e.address("wptr_address", m::wptr_addr_lo, m::wptr_addr_hi);
      break;
    }
    case pm4::opcode::UNMAP_QUEUES: {
      namespace m = pm4::unmap_queues;
      e("action", m::action);
      e("queue_sel", m::queue_sel);
      e("engine_sel", m::engine_sel);
      e("num_queues", m::num_queues);
      if (m::queue_sel.dword < dw.size() && m::queue_sel.get(dw[m::queue_sel.dword]) == 1) {
        e("pasid", m::pasid);
      } else {
        e("doorbell_offset0", m::doorbell_offset0);
        e("doorbell_offset1", m::doorbell_offset1);
        e("doorbell_offset2", m::doorbell_offset2);
        e("doorbell_offset3", m::doorbell_offset3);
      }
      break;
    }
    case pm4::opcode::RUN_LIST: {
      namespace m = pm4::run_list;
      e.address("ib_base", m::ib_base_lo, m::ib_base_hi, 2);
      e("ib_size", m::ib_size);
      e("chain", m::chain);
      e("offload_polling", m::offload_polling);
      e("valid", m::valid);
      e("process_cnt", m::process_cnt);
      break;
    }
    case pm4::opcode::SET_RESOURCES: {
      namespace m = pm4::set_resources;
      e("vmid_mask", m::vmid_mask);
      e("unmap_latency", m::unmap_latency);
      e("queue_type", m::queue_type);
      e.address("queue_mask", m::queue_mask_lo, m::queue_mask_hi);
      e.address("gws_mask", m::gws_mask_lo, m::gws_mask_hi);
      e("oac_mask", m::oac_mask);
      e("gds_heap_base", m::gds_heap_base);
      e("gds_heap_size", m::gds_heap_size);
      break;
    }
    case pm4::opcode::QUERY_STATUS: {
      namespace m = pm4::query_status;
      e("context_id", m::context_id);
      e("interrupt_sel", m::interrupt_sel);
      e("command", m::command);
      e("pasid", m::pasid);
      e.address("addr", m::addr_lo, m::addr_hi);
      e.address("data", m::data_lo, m::data_hi);
      break;
    }
    default:
      break;
  }
  return out;
}

namespace {

class RlsDecoder {
 public:
  explicit RlsDecoder(std::string_view name) : name_(name), diag_(std::string(name)) {}

  RlsDump run(LineSource& lines) {
    auto other = detail::for_each_line(lines, InputKind::rls, [&](std::string_view line, bool cut) {
      line_ = lines.line_number();
      if (cut) {
        if (out_.nodes.empty()) {
          out_.complete = false;
          diag_.add(line_, detail::too_long_message(line, lines.max_line(), "debugfs rls"));
        } else {
          fail(line_, detail::too_long_message(line, lines.max_line(), "debugfs rls"));
        }
        return true;
      }
      return handle(line);
    });
    if (other) {
      RlsDump wrong;
      wrong.complete = false;
      wrong.looks_like = *other;
      wrong.diagnostics = {{std::string(name_), 0, wrong_kind_message(*other, InputKind::rls, name_)}};
      return wrong;
    }
    if (!lines.ended_with_newline()) {
      diag_.add(line_, "file ends in the middle of a line (no final newline): output cut short");
      out_.complete = false;
      if (!out_.nodes.empty()) out_.nodes.back().complete = false;
    }
    close_node();
    out_.diagnostics = diag_.take();
    return std::move(out_);
  }

 private:
  void fail(std::size_t line, const std::string& msg) {
    diag_.add(line, msg);
    out_.complete = false;
    if (!out_.nodes.empty()) out_.nodes.back().complete = false;
  }

  // Stops decoding: the input holds more than any kernel prints.
  bool stop(const std::string& what) {
    fail(line_, what + ": stopped reading here");
    return false;
  }

  bool handle(std::string_view line) {
    std::string_view t = detail::trim(line);
    if (t.empty()) return true;
    RlsNode n;
    if (parse_node_header(t, n.node, n.gpu_id, n.gpu_id_hex)) {
      close_node();
      if (out_.nodes.size() >= kMaxRlsNodes) return stop("more than " + std::to_string(kMaxRlsNodes) + " nodes");
      n.line = line_;
      out_.nodes.push_back(std::move(n));
      ib_.clear();
      ib_lines_.clear();
      return true;
    }
    if (out_.nodes.empty()) {
      out_.complete = false;
      diag_.add(line_, "expected \"Node <n>, gpu_id <id>:\", got " + quote_line(t));
      return true;
    }
    if (t == "No active runlist") return true;
    if (auto row = detail::parse_hex_row(line)) {
      const std::uint64_t want = ib_.size() * 4;
      if (row->offset != want) {
        fail(line_, "expected runlist row at offset " + detail::hex_string(want) + ", got " +
                        detail::hex_string(row->offset) + ": rows missing");
        return true;
      }
      if (row->malformed_value || row->values.empty() || row->values.size() > 8)
        fail(line_, "expected 1 to 8 hex words of 8 digits after the offset, got " + quote_line(t));
      dwords_ += row->values.size();
      if (dwords_ > kMaxRlsDwords)
        return stop("more than " + std::to_string(kMaxRlsDwords) + " runlist dwords (real runlists are a few KiB)");
      for (auto v : row->values) {
        ib_.push_back(v);
        ib_lines_.push_back(line_);
      }
      out_.nodes.back().active_runlist = true;
      return true;
    }
    fail(line_, "expected a runlist hex row \"<offset>: <hex words>\" or \"No active runlist\", got " + quote_line(t));
    return true;
  }

  void close_node() {
    if (out_.nodes.empty()) return;
    RlsNode& n = out_.nodes.back();
    if (!n.packets.empty() || n.ib_dwords) return;  // already closed
    n.ib_dwords = ib_.size();
    std::size_t i = 0;
    while (i < ib_.size()) {
      const std::uint32_t h = ib_[i];
      if (h == 0) {
        std::size_t j = i;
        while (j < ib_.size() && ib_[j] == 0) ++j;
        if (j == ib_.size()) {
          n.padding_dwords = j - i;
          break;
        }
        fail(ib_lines_[i], "zero dword at IB offset " + detail::hex_string(i * 4) +
                               " followed by more packets: expected a PM4 type-3 header");
        break;
      }
      if (pm4::header::type.get(h) != pm4::kType3) {
        fail(ib_lines_[i], "expected a PM4 type-3 header at IB offset " + detail::hex_string(i * 4) +
                               ", got " + detail::hex_string(h) + " (packet type " +
                               std::to_string(pm4::header::type.get(h)) + "); rest of the runlist not decoded");
        break;
      }
      Pm4Packet p;
      p.dword_offset = i;
      p.line = ib_lines_[i];
      p.header = h;
      p.opcode = pm4::header::opcode.get(h);
      p.dwords = pm4::packet_dwords(h);
      std::string_view name = pm4::opcode_name(p.opcode);
      if (name.empty()) {
        char b[8];
        std::snprintf(b, sizeof b, "0x%02x", p.opcode);
        p.opcode_name = b;
      } else {
        p.opcode_name = std::string(name);
      }
      const std::size_t end = std::min(ib_.size(), i + p.dwords);
      p.raw.assign(ib_.begin() + static_cast<std::ptrdiff_t>(i),
                   ib_.begin() + static_cast<std::ptrdiff_t>(end));
      if (end < i + p.dwords) {
        p.complete = false;
        fail(ib_lines_.back(), p.opcode_name + " packet at IB offset " + detail::hex_string(i * 4) +
                                   " announces " + std::to_string(p.dwords) + " dwords but the dump ends after " +
                                   std::to_string(end - i));
      }
      p.fields = decode_pm4_fields(p.opcode, p.raw);
      n.packets.push_back(std::move(p));
      i = end;
    }
    ib_.clear();
    ib_lines_.clear();
  }

  std::string_view name_;
  DiagnosticSink diag_;
  RlsDump out_;
  std::size_t dwords_ = 0;
  std::vector<std::uint32_t> ib_;
  std::vector<std::size_t> ib_lines_;
  std::size_t line_ = 0;
};

}  // namespace

RlsDump decode_rls(LineSource& lines, std::string_view display_name) {
  return RlsDecoder(display_name).run(lines);
}

RlsDump decode_rls(std::string_view text, std::string_view display_name) {
  TextLines lines(text);
  return decode_rls(lines, display_name);
}

}  // namespace gpreempt::discovery
