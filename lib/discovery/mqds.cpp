#include "discovery/mqds.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "discovery/gfx9_mqd_layout.h"
#include "discovery/text_scan.h"

namespace gpreempt::discovery {

namespace {

std::size_t expected_bytes(const std::string& type) {
  if (type == "sdma") return gfx9::kSdmaMqdBytes;
  return gfx9::kComputeMqdBytes;
}

// Parses "<words...> on device <hex>" queue headers. Returns false when the line is not one.
bool parse_queue_header(std::string_view t, MqdsQueue& q) {
  using detail::starts_with;
  std::string_view rest;
  if (starts_with(t, "Compute queue on device ")) {
    q.type = "compute";
    rest = t.substr(24);
  } else if (starts_with(t, "SDMA queue on device ")) {
    q.type = "sdma";
    rest = t.substr(21);
  } else if (starts_with(t, "DIQ on device ")) {
    q.type = "diq";
    rest = t.substr(14);
  } else if (starts_with(t, "Bad user queue type ") ||
             starts_with(t, "Queue node with bad user queue type ")) {
    q.type = "unknown";
    const std::size_t a = t.find("type ") + 5;
    const std::size_t on = t.find(" on device ");
    if (on == std::string_view::npos) return false;
    auto n = detail::parse_signed(t.substr(a, on - a));
    if (!n) return false;
    q.raw_type = static_cast<int>(*n);
    rest = t.substr(on + 11);
  } else {
    return false;
  }
  auto id = detail::parse_hex(rest);
  if (!id || *id > 0xffffffffull) return false;
  q.gpu_id = static_cast<std::uint32_t>(*id);
  q.gpu_id_hex = std::string(rest);
  return true;
}

// "Process %d PASID %d:" / "Process %d PASID 0x%x:".
bool parse_process_header(std::string_view t, MqdsProcess& p) {
  if (!detail::starts_with(t, "Process ") || t.empty() || t.back() != ':') return false;
  t = t.substr(8, t.size() - 9);
  const std::size_t k = t.find(" PASID ");
  if (k == std::string_view::npos) return false;
  auto pid = detail::parse_signed(t.substr(0, k));
  std::string_view pasid = t.substr(k + 7);
  p.pasid_printed_hex = detail::starts_with(pasid, "0x");
  auto pv = detail::parse_number(pasid);
  if (!pid || !pv) return false;
  p.pid = static_cast<int>(*pid);
  p.pasid = static_cast<std::uint32_t>(*pv);
  return true;
}

class Decoder {
 public:
  explicit Decoder(std::string_view name) : name_(name), diag_(std::string(name)) {}

  MqdsDump run(LineSource& lines) {
    auto other = detail::for_each_line(lines, InputKind::mqds, [&](std::string_view line, bool cut) {
      line_ = lines.line_number();
      if (cut) {
        fail(detail::too_long_message(line, lines.max_line(), "debugfs mqds"));
        return true;
      }
      return handle(line);
    });
    if (other) {
      MqdsDump wrong;
      wrong.complete = false;
      wrong.looks_like = *other;
      wrong.diagnostics = {{std::string(name_), 0, wrong_kind_message(*other, InputKind::mqds, name_)}};
      return wrong;
    }
    close_queue();
    check_copy_counts();
    if (!lines.ended_with_newline()) {
      diag_.add(line_, "file ends in the middle of a line (no final newline): output cut short");
      mark_last_incomplete();
    }
    out_.diagnostics = diag_.take();
    return std::move(out_);
  }

 private:
  // A problem with the current line: the file, and the queue being dumped, are incomplete.
  void fail(std::string msg) {
    diag_.add(line_, std::move(msg));
    out_.complete = false;
    if (queue_) queue_->complete = false;
  }

  // Stops decoding: the input holds more than any kernel prints.
  bool stop(const std::string& what) {
    diag_.add(line_, what + ": stopped reading here");
    mark_last_incomplete();
    return false;
  }

  bool handle(std::string_view line) {
    std::string_view t = detail::trim(line);
    if (t.empty()) return true;
    MqdsProcess p;
    if (parse_process_header(t, p)) {
      close_queue();
      if (out_.processes.size() >= kMaxMqdsProcesses)
        return stop("more than " + std::to_string(kMaxMqdsProcesses) + " processes");
      p.line = line_;
      out_.processes.push_back(std::move(p));
      return true;
    }
    MqdsQueue q;
    if (parse_queue_header(t, q)) {
      close_queue();
      if (++queues_ > kMaxMqdsQueues) return stop("more than " + std::to_string(kMaxMqdsQueues) + " queues");
      if (out_.processes.empty()) {
        fail("queue header before any \"Process <pid> PASID <pasid>:\" line");
        out_.processes.push_back(MqdsProcess{});
        out_.processes.back().line = line_;
      }
      q.line = line_;
      out_.processes.back().queues.push_back(std::move(q));
      queue_ = &out_.processes.back().queues.back();
      return true;
    }
    if (auto row = detail::parse_hex_row(line)) {
      add_row(*row, t);
      return true;
    }
    fail("expected \"Process <pid> PASID <pasid>:\", \"<type> queue on device <gpu_id>\" "
         "or a hex dump row \"<offset>: <8 hex words>\", got " + quote_line(t));
    return true;
  }

  void add_row(const detail::HexRow& row, std::string_view t) {
    if (!queue_) {
      diag_.add(line_, "hex dump row outside any queue: " + quote_line(t));
      out_.complete = false;
      return;
    }
    if (row.offset == 0) {
      close_copy();
      ignore_rows_ = false;
      if (queue_->xcc_copies.size() >= kMaxMqdCopies) {
        fail("more than " + std::to_string(kMaxMqdCopies) +
             " MQD copies for one queue (one per XCC, and no GPU has that many XCCs): further copies ignored");
        ignore_rows_ = true;
        return;
      }
      queue_->xcc_copies.push_back(MqdCopy{});
      queue_->xcc_copies.back().xcc = static_cast<std::uint32_t>(queue_->xcc_copies.size() - 1);
      expected_offset_ = 0;
      copy_open_ = true;
      copy_damaged_ = false;
    }
    if (ignore_rows_) return;
    if (!copy_open_) {
      fail("hex dump row at offset " + detail::hex_string(row.offset) + " without a preceding row at offset 0");
      return;
    }
    MqdCopy& c = queue_->xcc_copies.back();
    if (row.offset != expected_offset_) {
      fail("expected hex dump row at offset " + detail::hex_string(expected_offset_) + ", got " + detail::hex_string(row.offset) +
           ": rows missing");
      copy_open_ = false;
      return;
    }
    const std::size_t want = expected_bytes(queue_->type);
    if (expected_offset_ >= want) {
      fail("MQD copy " + std::to_string(c.xcc) + " of the " + queue_->type + " queue on device " +
           queue_->gpu_id_hex + " goes on past the " + std::to_string(want) + " bytes of a GFX9 MQD: rows from offset " +
           detail::hex_string(row.offset) + " ignored");
      copy_damaged_ = true;
      ignore_rows_ = true;
      return;
    }
    if (row.malformed_value || row.values.size() != 8) {
      char off[16];
      std::snprintf(off, sizeof off, "%.8llx", static_cast<unsigned long long>(row.offset));
      fail(std::string("expected 8 hex words of 8 digits after \"") + off + ":\", got " +
           std::to_string(row.values.size()) + (row.malformed_value ? " and a malformed token" : ""));
    }
    for (std::uint32_t v : row.values)
      if (c.dwords.size() < want / 4) c.dwords.push_back(v);
    expected_offset_ += row.values.size() * 4;
    if (row.malformed_value || row.values.size() != 8) {
      // Keep later rows at their true offsets: the unreadable words of this 32-byte row become
      // zero and the copy stays marked damaged, so no decoded value is presented as complete.
      copy_damaged_ = true;
      expected_offset_ = row.offset + 32;
      c.dwords.resize(std::min<std::size_t>(expected_offset_, want) / 4, 0);
    }
    c.bytes = c.dwords.size() * 4;
  }

  void close_copy() {
    if (!queue_ || queue_->xcc_copies.empty() || !copy_open_) {
      copy_open_ = false;
      return;
    }
    MqdCopy& c = queue_->xcc_copies.back();
    copy_open_ = false;
    const std::size_t want = expected_bytes(queue_->type);
    c.complete = c.bytes == want && !copy_damaged_;
    if (!c.complete) {
      queue_->complete = false;
      out_.complete = false;
    }
    if (c.bytes != want) {
      diag_.add(line_, "MQD copy " + std::to_string(c.xcc) + " of the " + queue_->type +
                           " queue on device " + queue_->gpu_id_hex + " (line " +
                           std::to_string(queue_->line) + ") has " + std::to_string(c.bytes) +
                           " bytes, expected " + std::to_string(want) +
                           " (a GFX9 MQD): dump cut short");
    }
    if (queue_->type == "sdma")
      c.sdma = decode_sdma_mqd(c.dwords);
    else
      c.compute = decode_compute_mqd(c.dwords);
  }

  void close_queue() {
    if (!queue_) return;
    close_copy();
    if (queue_->xcc_copies.empty()) {
      diag_.add(queue_->line, "the " + queue_->type + " queue on device " + queue_->gpu_id_hex +
                                  " has no MQD dump");
      queue_->complete = false;
      out_.complete = false;
    }
    queue_ = nullptr;
    ignore_rows_ = false;
  }

  // Every compute queue of a GPU has one MQD per XCC. A dump cut exactly between two copies
  // looks well-formed, but shows up as a queue with fewer copies than its siblings.
  void check_copy_counts() {
    std::map<std::uint32_t, std::size_t> most;
    for (const auto& p : out_.processes)
      for (const auto& q : p.queues)
        if (q.type == "compute") most[q.gpu_id] = std::max(most[q.gpu_id], q.xcc_copies.size());
    for (auto& p : out_.processes)
      for (auto& q : p.queues) {
        if (q.type != "compute" || q.xcc_copies.empty() || q.xcc_copies.size() == most[q.gpu_id]) continue;
        diag_.add(q.line, "the compute queue on device " + q.gpu_id_hex + " has " +
                              std::to_string(q.xcc_copies.size()) + " MQD copies, other compute queues on it have " +
                              std::to_string(most[q.gpu_id]) + " (one per XCC): dump cut short");
        q.complete = false;
        out_.complete = false;
      }
  }

  void mark_last_incomplete() {
    out_.complete = false;
    if (!out_.processes.empty() && !out_.processes.back().queues.empty())
      out_.processes.back().queues.back().complete = false;
  }

  std::string_view name_;
  DiagnosticSink diag_;
  MqdsDump out_;
  MqdsQueue* queue_ = nullptr;  // points into out_; stable because only the last queue grows
  bool copy_open_ = false;
  bool copy_damaged_ = false;
  bool ignore_rows_ = false;    // rows of a copy past a bound: reported once, then skipped
  std::size_t queues_ = 0;
  std::uint64_t expected_offset_ = 0;
  std::size_t line_ = 0;
};

}  // namespace

MqdsDump decode_mqds(LineSource& lines, std::string_view display_name) {
  return Decoder(display_name).run(lines);
}

MqdsDump decode_mqds(std::string_view text, std::string_view display_name) {
  TextLines lines(text);
  return decode_mqds(lines, display_name);
}

}  // namespace gpreempt::discovery
