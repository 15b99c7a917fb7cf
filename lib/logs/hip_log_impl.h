// LogAnalyzer's state, shared by the files that do its work: hip_log_records.cpp turns chunks
// into logical records (lines, wraps, glued records, colour), hip_log_summary.cpp adds what each
// record says to the summary, hip_log_analyzer.cpp ends the stream. Internal to lib/logs.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "logs/hip_log_analyzer.h"
#include "logs/line_scan.h"
#include "logs/log_record.h"

namespace gpreempt::logs {

namespace detail {

// The keyword's length is a constant, so the comparison compiles to a few loads instead of a call.
template <std::size_t N>
inline bool starts_with(std::string_view s, const char (&p)[N]) {
  return s.size() >= N - 1 && std::memcmp(s.data(), p, N - 1) == 0;
}

// Inlined: it runs several times per record, mostly finding nothing to trim.
[[gnu::always_inline]] inline std::string_view trim(std::string_view s) {
  const char* b = s.data();
  const char* e = b + s.size();
  while (b != e && (*b == ' ' || *b == '\t')) ++b;
  while (e != b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) --e;
  return std::string_view(b, static_cast<std::size_t>(e - b));
}

}  // namespace detail

struct LogAnalyzer::Impl {
  AnalyzerOptions opt;
  LogSummary sum;

  std::string carry;           // partial physical line at the end of the last chunk
  std::string_view pending;    // the record being assembled (may continue on the next line)
  std::string pending_store;   // owns `pending` when it cannot point into the caller's chunk
  bool has_pending = false;
  bool pending_owned = false;
  // No escape and no " :<digit>:" in `pending` before this offset (line_scan.h); 0 when unknown,
  // detail::kCleanLine when there is none.
  std::size_t pending_suspect = 0;
  std::size_t pending_line = 0;
  std::size_t prev_len = 0;
  bool prev_may_wrap = false;  // may_be_wrapped(the previous line)
  std::string ansi_scratch;
  detail::BracketCache brackets;

  // Keys outside int's range: a log may print any int as its pid, -1 included (found by fuzzing).
  static constexpr std::int64_t kNoPid = std::numeric_limits<std::int64_t>::min();
  static constexpr std::int64_t kNoRecordYet = kNoPid + 1;
  std::map<std::int64_t, std::size_t> proc_index;  // pid (kNoPid: none) -> processes[]
  std::int64_t last_pid = kNoRecordYet;
  std::size_t last_proc = 0;
  std::string last_tid;
  std::uint64_t last_bracket = 0;  // LogRecord::bracket of the last record thread() saw

  std::map<std::pair<std::int64_t, std::uint64_t>, std::size_t> hwq_index;
  std::vector<std::uint64_t> hwq_first;             // PieceSummary::first_record
  std::map<std::uint64_t, detail::DumpedQueue> dumps;  // PieceSummary::dumps
  std::pair<std::int64_t, std::uint64_t> last_hwq_key{-2, 0};
  std::size_t last_hwq = 0;

  std::string_view last_kernel;  // the key in sum.kernels (map nodes never move)
  std::uint64_t* last_kernel_count = nullptr;

  bool finished = false;
  std::array<std::uint64_t, 10> levels{};

  explicit Impl(AnalyzerOptions o) : opt(o) {}
  // --- hip_log_records.cpp: chunks -> physical lines -> logical records -------------------------
  void feed(std::string_view chunk);
  void append_carry(std::string_view s);
  void end_stream();
  // Inlined into the line loop (hip_log_records.cpp, the only caller): see physical_line.
  [[gnu::always_inline]] inline void physical_line(std::string_view line, std::size_t suspect);
  [[gnu::always_inline]] inline bool whole_record_line(std::string_view line, const detail::LineSuspects& sus,
                                                       std::string_view next);
  [[gnu::always_inline]] inline void flush();
  [[gnu::always_inline]] inline void split_glued(std::string_view text, std::size_t line_no, std::size_t suspect);
  static bool starts_record(std::string_view line);
  static bool may_be_wrapped(std::string_view line);
  bool coloured_record_line(std::string_view line, const detail::LineSuspects& sus, detail::LogRecord& rec);
  static std::size_t csi_end(std::string_view line, std::size_t esc);
  bool is_wrapped_continuation(std::string_view line) const;
  void own_pending();
  static void end_message_with(detail::LogRecord& rec, std::string_view s);
  void split_glued_suspect(std::string_view text, std::size_t line_no, std::size_t suspect);
  static std::size_t next_glued(std::string_view text, std::size_t from);
  static bool is_glued_at(std::string_view text, std::size_t i);
  static bool looks_like_prefix(std::string_view s);
  std::string_view strip_ansi(std::string_view s, std::size_t from = 0);
  void record(std::string_view s, std::size_t line_no, const detail::LogRecord* parsed = nullptr);

  // --- hip_log_summary.cpp: what one record adds to the summary ---------------------------------
  void one(const detail::LogRecord& rec, std::string_view s, std::size_t line_no, bool coloured = false);
  void other(std::string_view s, std::size_t line_no);
  void thread(const detail::LogRecord& r);
  HwQueueStats& hwq(std::int64_t pid, std::uint64_t address);
  void packet(std::int64_t pid, std::string_view m);
  void created(std::int64_t pid, std::string_view m, std::size_t line_no, bool with_swq);
  void refcount(std::int64_t pid, std::string_view rest, bool acquire);
  void kernel(std::string_view name);
  void error(std::size_t line_no, std::string_view text, bool coloured = false);

  // --- hip_log_analyzer.cpp: the end of the stream ----------------------------------------------
  const LogSummary& finish();
  detail::PieceSummary finish_piece();
};

}  // namespace gpreempt::logs
