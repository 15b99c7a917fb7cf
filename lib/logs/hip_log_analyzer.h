// Streaming analyzer for HIP/ROCclr runtime logs (AMD_LOG_LEVEL 1-5). Feed it chunks of any size;
// memory stays bounded by what the log names (distinct HW queues, threads, kernels) plus a capped
// error list, never by the file size. Handles every record prefix ROCm has printed, ANSI colour
// codes, and terminal-wrapped pastes (records glued on one line, long records hard-wrapped).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gpreempt::logs {

struct HwQueueStats {
  std::optional<int> pid;
  std::uint64_t address = 0;             // HWq= (ROCr amd_queue_t address)
  std::set<std::uint64_t> sw_queues;     // SWq= values seen with it
  std::optional<std::uint64_t> size;     // from its creation line
  std::optional<int> priority;           // ROCr queue priority (0 low, 1 normal, 2 high)
  std::optional<bool> cooperative;
  std::optional<std::size_t> created_line;
  std::set<std::uint64_t> ids;           // ROCr dispatch-line "id=N" values
  std::uint64_t acquired = 0;            // acquireQueue / Selected queue (streams mapped on it)
  std::uint64_t released = 0;            // releaseQueue
  bool deleted = false;                  // "Deleting hardware queue"
  std::uint64_t dispatches = 0;
  std::uint64_t barriers = 0;
};

struct ProcessThreads {
  std::optional<int> pid;                // nullopt when the log prints no pid
  std::set<std::string> tids;
};

struct LogError {
  std::size_t line = 0;  // 1-based physical line where the record starts
  std::string text;
};

struct LogSummary {
  std::uint64_t lines = 0;       // physical lines
  std::uint64_t records = 0;     // logical records (a wrapped record spans lines; glued ones share)
  std::uint64_t recognized = 0;  // records recognized as runtime log output
  std::uint64_t other_pids = 0;  // records left out because AnalyzerOptions::pid asked for another
  std::map<int, int> levels;     // record level -> count
  std::vector<ProcessThreads> processes;
  std::vector<HwQueueStats> hw_queues;  // in order of first appearance
  std::uint64_t dispatches = 0;  // kernel-dispatch packet lines
  std::uint64_t barriers = 0;    // BarrierAND packet lines
  // ShaderName -> count. std::less<> so a name is looked up as a string_view: no copy per record.
  std::map<std::string, std::uint64_t, std::less<>> kernels;
  std::vector<LogError> errors;
  std::uint64_t errors_total = 0;  // errors beyond max_errors are counted, not kept
  bool truncated_record = false;   // a record longer than the record cap was cut
};

namespace detail {

// What the queue-abort dump lines ("VGPU=… SWq=…, HWq=…, id=N", printed without a pid) said about
// one HWq address.
struct DumpedQueue {
  // Ordinal (1-based, as LogSummary::records counts) of the first dump line naming it.
  std::uint64_t first_record = 0;
  std::set<std::uint64_t> sw_queues;
  std::set<std::uint64_t> ids;
};

// A summary whose dump lines are not yet tied to a queue. Which queue a dump line belongs to
// depends on what came before it, possibly in an earlier piece of the file: pieces analyzed apart
// keep their dumps aside, are appended (log_merge.h), and only the whole is resolved.
struct PieceSummary {
  LogSummary summary;                          // hw_queues: those named by records, in order of first record
  std::vector<std::uint64_t> first_record;     // hw_queues[i]'s first record (ordinal)
  std::map<std::uint64_t, DumpedQueue> dumps;  // by HWq address
};

// Ties the dumps to queues as they are in the one-pass result: every dump line naming HWq A goes to
// the first queue with address A (whatever its pid) named before the first of those lines, else to
// the pid-less queue of A, which then first appears at that line.
LogSummary resolve_dumps(PieceSummary piece);

}  // namespace detail

struct AnalyzerOptions {
  std::optional<int> pid;         // keep only records of this pid (records without a pid are kept)
  std::size_t max_errors = 1000;
  std::size_t max_record_bytes = 1 << 20;
};

class LogAnalyzer {
 public:
  explicit LogAnalyzer(AnalyzerOptions options = {});
  ~LogAnalyzer();
  LogAnalyzer(const LogAnalyzer&) = delete;
  LogAnalyzer& operator=(const LogAnalyzer&) = delete;

  void feed(std::string_view chunk);
  // Ends the stream (a last line without "\n" counts) and returns the summary.
  const LogSummary& finish();
  // Ends the stream and hands over the summary with its dump lines unresolved, for merging pieces
  // of one log (log_merge.h). Call it instead of finish(), once.
  detail::PieceSummary finish_piece();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whole-text convenience (tests, small inputs).
LogSummary analyze_log(std::string_view text, AnalyzerOptions options = {});

}  // namespace gpreempt::logs
