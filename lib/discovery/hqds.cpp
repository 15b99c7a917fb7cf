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

class Decoder {
 public:
  explicit Decoder(std::string_view name) : diag_(std::string(name)) {}

  HqdsDump run(std::string_view text) {
    detail::LineReader lines(text);
    std::string_view line;
    while (lines.next(line)) {
      line_ = lines.line_number();
      handle(line);
    }
    close_slot();
    if (!text.empty() && !lines.ended_with_newline()) {
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

  void handle(std::string_view line) {
    std::string_view t = detail::trim(line);
    if (t.empty()) return;
    HqdsNode n;
    if (parse_node_header(t, n.node, n.gpu_id, n.gpu_id_hex)) {
      close_slot();
      n.line = line_;
      out_.nodes.push_back(std::move(n));
      return;
    }
    if (t == "Device is stopped") {
      close_slot();
      if (out_.nodes.empty()) return fail("\"Device is stopped\" before any \"Node <n>, gpu_id <id>:\" line");
      out_.nodes.back().stopped = true;
      return;
    }
    HqdSlot s;
    if (parse_slot_header(t, s)) {
      close_slot();
      if (out_.nodes.empty()) return fail("queue slot header before any \"Node <n>, gpu_id <id>:\" line");
      if (out_.nodes.back().stopped)
        fail("queue slot listed for node " + std::to_string(out_.nodes.back().node) +
             " after \"Device is stopped\"");
      s.line = line_;
      out_.nodes.back().slots.push_back(std::move(s));
      slot_open_ = true;
      return;
    }
    if (auto row = detail::parse_hex_row(line)) {
      if (!slot_open_) return fail("register row outside any queue slot: \"" + std::string(t) + "\"");
      HqdSlot& slot = out_.nodes.back().slots.back();
      if (row->malformed_value || row->values.empty()) {
        slot.complete = false;
        fail("expected \"<register address>: <1 to 8 hex words of 8 digits>\", got \"" +
             std::string(t) + "\"");
      }
      last_row_line_ = line_;
      std::uint32_t addr = static_cast<std::uint32_t>(row->offset);
      for (std::uint32_t v : row->values) {
        slot.registers.emplace_back(addr, v);
        addr += 4;
      }
      return;
    }
    fail("expected \"Node <n>, gpu_id <id>:\", a queue slot header (HIQ/CP/SDMA) or a register row, got \"" +
         std::string(t) + "\"");
    if (slot_open_) out_.nodes.back().slots.back().complete = false;
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

  DiagnosticSink diag_;
  HqdsDump out_;
  bool slot_open_ = false;
  std::size_t line_ = 0;
  std::size_t last_row_line_ = 0;
};

}  // namespace

HqdsDump decode_hqds(std::string_view text, std::string_view display_name) {
  return Decoder(display_name).run(text);
}

}  // namespace gpreempt::discovery
