#include "discovery/hqds.h"

#include <algorithm>

#include "discovery/gfx9_mqd_layout.h"
#include "discovery/text_scan.h"

namespace gpreempt::discovery {

bool parse_node_header(std::string_view t, std::uint32_t& node, std::uint32_t& gpu_id,
                       std::string& gpu_id_hex) {
  if (!detail::starts_with(t, "Node ") || t.empty() || t.back() != ':') return false;
  t = t.substr(5, t.size() - 6);
  const std::size_t k = t.find(", gpu_id ");
  if (k == std::string_view::npos) return false;
  auto n = detail::parse_number(t.substr(0, k));
  auto g = detail::parse_hex(t.substr(k + 9));
  if (!n || !g || *g > 0xffffffffull) return false;
  node = static_cast<std::uint32_t>(*n);
  gpu_id = static_cast<std::uint32_t>(*g);
  gpu_id_hex = std::string(t.substr(k + 9));
  return true;
}

namespace {

// Reads "<prefix><n>" numbers out of a header such as "Inst 0,  CP Pipe 1, Queue 2".
std::optional<std::uint32_t> number_after(std::string_view t, std::string_view key) {
  const std::size_t k = t.find(key);
  if (k == std::string_view::npos) return std::nullopt;
  std::string_view rest = t.substr(k + key.size());
  std::size_t e = 0;
  while (e < rest.size() && rest[e] >= '0' && rest[e] <= '9') ++e;
  auto v = detail::parse_number(rest.substr(0, e));
  if (!v) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

// Slot headers, newest and older kernels:
//   "Inst %d, HIQ on MEC %d Pipe %d Queue %d"  /  "HIQ on MEC %d Pipe %d Queue %d"
//   "Inst %d,  CP Pipe %d, Queue %d"           /  "CP Pipe %d, Queue %d"
//   "SDMA Engine %d, RLC %d"
bool parse_slot_header(std::string_view t, HqdSlot& s) {
  std::uint32_t xcc = 0;
  if (detail::starts_with(t, "Inst ")) {
    auto x = number_after(t, "Inst ");
    const std::size_t comma = t.find(',');
    if (!x || comma == std::string_view::npos) return false;
    xcc = *x;
    t = detail::trim(t.substr(comma + 1));
  }
  s.xcc = xcc;
  if (detail::starts_with(t, "HIQ on MEC ")) {
    auto mec = number_after(t, "MEC "), pipe = number_after(t, "Pipe "),
         queue = number_after(t, "Queue ");
    if (!mec || !pipe || !queue) return false;
    s.kind = "HIQ";
    s.mec = *mec;
    s.pipe = *pipe;
    s.queue = *queue;
    return true;
  }
  if (detail::starts_with(t, "CP Pipe ")) {
    auto pipe = number_after(t, "Pipe "), queue = number_after(t, "Queue ");
    if (!pipe || !queue) return false;
    s.kind = "CP";
    s.pipe = *pipe;
    s.queue = *queue;
    return true;
  }
  if (detail::starts_with(t, "SDMA Engine ")) {
    auto eng = number_after(t, "Engine "), rlc = number_after(t, "RLC ");
    if (!eng || !rlc) return false;
    s.kind = "SDMA";
    s.pipe = *eng;
    s.queue = *rlc;
    return true;
  }
  return false;
}

class HqdsDecoder {
 public:
  explicit HqdsDecoder(std::string_view name) : name_(name), diag_(std::string(name)) {}

  HqdsDump run(LineSource& lines) {
    auto other = detail::for_each_line(lines, InputKind::hqds, [&](std::string_view line, bool cut) {
      line_ = lines.line_number();
      if (cut) {
        fail(detail::too_long_message(line, lines.max_line(), "debugfs hqds"));
        if (slot_open_) out_.nodes.back().slots.back().complete = false;
        return true;
      }
      return handle(line);
    });
    if (other) {
      HqdsDump wrong;
      wrong.complete = false;
      wrong.looks_like = *other;
      wrong.diagnostics = {{std::string(name_), 0, wrong_kind_message(*other, InputKind::hqds, name_)}};
      return wrong;
    }
    close_slot();
    if (!lines.ended_with_newline()) {
      diag_.add(line_, "file ends in the middle of a line (no final newline): output cut short");
      out_.complete = false;
      if (!out_.nodes.empty() && !out_.nodes.back().slots.empty())
        out_.nodes.back().slots.back().complete = false;
    }
    out_.diagnostics = diag_.take();
    return std::move(out_);
  }

 private:
  void fail(const std::string& msg) {
    diag_.add(line_, msg);
    out_.complete = false;
  }

  // Stops decoding: the input holds more than any kernel prints.
  bool stop(const std::string& what) {
    close_slot();
    fail(what + ": stopped reading here");
    return false;
  }

  bool handle(std::string_view line) {
    std::string_view t = detail::trim(line);
    if (t.empty()) return true;
    const bool ignoring = ignore_rows_;
    ignore_rows_ = false;  // every line but a dump row ends the rows being skipped
    HqdsNode n;
    if (parse_node_header(t, n.node, n.gpu_id, n.gpu_id_hex)) {
      close_slot();
      if (out_.nodes.size() >= kMaxHqdsNodes) return stop("more than " + std::to_string(kMaxHqdsNodes) + " nodes");
      n.line = line_;
      out_.nodes.push_back(std::move(n));
      return true;
    }
    if (t == "Device is stopped") {
      close_slot();
      if (out_.nodes.empty()) fail("\"Device is stopped\" before any \"Node <n>, gpu_id <id>:\" line");
      else out_.nodes.back().stopped = true;
      return true;
    }
    HqdSlot s;
    if (parse_slot_header(t, s)) {
      close_slot();
      if (out_.nodes.empty()) {
        fail("queue slot header before any \"Node <n>, gpu_id <id>:\" line");
        return true;
      }
      if (++slots_ > kMaxHqdsSlots) return stop("more than " + std::to_string(kMaxHqdsSlots) + " queue slots");
      if (out_.nodes.back().stopped)
        fail("queue slot listed for node " + std::to_string(out_.nodes.back().node) +
             " after \"Device is stopped\"");
      s.line = line_;
      out_.nodes.back().slots.push_back(std::move(s));
      slot_open_ = true;
      return true;
    }
    if (auto row = detail::parse_hex_row(line)) {
      if (ignoring) {
        ignore_rows_ = true;
        return true;
      }
      if (!slot_open_) {
        fail("register row outside any queue slot: " + quote_line(t));
        return true;
      }
      HqdSlot& slot = out_.nodes.back().slots.back();
      if (row->malformed_value || row->values.empty()) {
        slot.complete = false;
        fail("expected \"<register address>: <1 to 8 hex words of 8 digits>\", got " + quote_line(t));
      }
      last_row_line_ = line_;
      std::uint32_t addr = static_cast<std::uint32_t>(row->offset);
      for (std::uint32_t v : row->values) {
        if (slot.registers.size() >= kMaxHqdRegisters) {
          slot.complete = false;
          fail("the " + slot.kind + " slot (line " + std::to_string(slot.line) + ") dumps more than " +
               std::to_string(kMaxHqdRegisters) + " registers: the rest of its rows are ignored");
          close_slot();
          ignore_rows_ = true;
          return true;
        }
        slot.registers.emplace_back(addr, v);
        addr += 4;
      }
      return true;
    }
    fail("expected \"Node <n>, gpu_id <id>:\", a queue slot header (HIQ/CP/SDMA) or a register row, got " +
         quote_line(t));
    if (slot_open_) out_.nodes.back().slots.back().complete = false;
    return true;
  }

  void close_slot() {
    if (!slot_open_) return;
    slot_open_ = false;
    HqdSlot& s = out_.nodes.back().slots.back();
    if (s.kind == "SDMA") {
      if (s.registers.empty()) {
        diag_.add(s.line, "SDMA slot without register rows");
        s.complete = false;
        out_.complete = false;
      }
      return;
    }
    // CP/HIQ: the 56-register window CP_MQD_BASE_ADDR..CP_HQD_PQ_WPTR_HI, contiguous.
    std::vector<std::uint32_t> window;
    bool contiguous = true;
    for (std::size_t i = 0; i < s.registers.size(); ++i) {
      if (i > 0 && s.registers[i].first != s.registers[i - 1].first + 4) contiguous = false;
      window.push_back(s.registers[i].second);
    }
    if (!contiguous) {
      diag_.add(s.line, "register addresses of the " + s.kind + " slot are not consecutive");
      s.complete = false;
      out_.complete = false;
    }
    if (window.size() != gfx9::hqd::kRegisterCount) {
      diag_.add(std::max(last_row_line_, s.line), s.kind + " slot (line " + std::to_string(s.line) + ") has " +
                           std::to_string(window.size()) + " registers, expected " +
                           std::to_string(gfx9::hqd::kRegisterCount) +
                           " (CP_MQD_BASE_ADDR..CP_HQD_PQ_WPTR_HI)");
      s.complete = false;
      out_.complete = false;
    }
    if (window.size() > gfx9::hqd::active) s.active = (window[gfx9::hqd::active] & 1u) != 0;
    if (s.active.value_or(false) || s.kind == "HIQ") s.decoded = decode_hqd_window(window);
  }

  std::string_view name_;
  DiagnosticSink diag_;
  HqdsDump out_;
  std::size_t slots_ = 0;
  bool slot_open_ = false;
  bool ignore_rows_ = false;  // rows of a slot past kMaxHqdRegisters: reported once, then skipped
  std::size_t line_ = 0;
  std::size_t last_row_line_ = 0;
};

}  // namespace

HqdsDump decode_hqds(LineSource& lines, std::string_view display_name) {
  return HqdsDecoder(display_name).run(lines);
}

HqdsDump decode_hqds(std::string_view text, std::string_view display_name) {
  TextLines lines(text);
  return decode_hqds(lines, display_name);
}

}  // namespace gpreempt::discovery
