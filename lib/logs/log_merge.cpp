#include "logs/log_merge.h"

#include <map>
#include <utility>

namespace gpreempt::logs {

void merge_into(detail::PieceSummary& into_piece, const detail::PieceSummary& later_piece,
                std::size_t max_errors) {
  LogSummary& into = into_piece.summary;
  const LogSummary& later = later_piece.summary;
  const std::uint64_t line_offset = into.lines;
  const std::uint64_t record_offset = into.records;
  into.lines += later.lines;
  into.records += later.records;
  into.recognized += later.recognized;
  into.other_pids += later.other_pids;
  for (const auto& [l, n] : later.levels) into.levels[l] += n;
  into.dispatches += later.dispatches;
  into.barriers += later.barriers;
  for (const auto& [k, n] : later.kernels) into.kernels[k] += n;
  into.truncated_record = into.truncated_record || later.truncated_record;

  std::map<std::optional<int>, std::size_t> process_index;
  for (std::size_t i = 0; i < into.processes.size(); ++i)
    process_index.emplace(into.processes[i].pid, i);
  for (const auto& p : later.processes) {
    auto [it, inserted] = process_index.try_emplace(p.pid, into.processes.size());
    if (inserted) into.processes.push_back({p.pid, {}});
    into.processes[it->second].tids.insert(p.tids.begin(), p.tids.end());
  }

  // A queue is the same queue only with the same pid: a pid-less record's HWq is not another
  // process's queue at that address. (Dump lines, which print no pid, are resolved on the whole.)
  std::map<std::pair<std::optional<int>, std::uint64_t>, std::size_t> queue_index;
  for (std::size_t i = 0; i < into.hw_queues.size(); ++i)
    queue_index.emplace(std::make_pair(into.hw_queues[i].pid, into.hw_queues[i].address), i);
  for (std::size_t k = 0; k < later.hw_queues.size(); ++k) {
    const HwQueueStats& h = later.hw_queues[k];
    auto [it, inserted] =
        queue_index.try_emplace(std::make_pair(h.pid, h.address), into.hw_queues.size());
    if (inserted) {
      HwQueueStats n = h;
      if (n.created_line) *n.created_line += line_offset;
      into.hw_queues.push_back(std::move(n));
      into_piece.first_record.push_back(later_piece.first_record[k] + record_offset);
      continue;
    }
    HwQueueStats* q = &into.hw_queues[it->second];
    q->sw_queues.insert(h.sw_queues.begin(), h.sw_queues.end());
    q->ids.insert(h.ids.begin(), h.ids.end());
    // As in one pass, a later creation line of the same address (a queue re-created after its
    // deletion) describes it from then on.
    if (h.size) q->size = h.size;
    if (h.priority) q->priority = h.priority;
    if (h.cooperative) q->cooperative = h.cooperative;
    if (h.created_line) q->created_line = *h.created_line + line_offset;
    q->acquired += h.acquired;
    q->released += h.released;
    q->deleted = q->deleted || h.deleted;
    q->dispatches += h.dispatches;
    q->barriers += h.barriers;
  }

  for (const auto& [address, d] : later_piece.dumps) {
    auto [it, inserted] = into_piece.dumps.try_emplace(address);
    if (inserted) it->second.first_record = d.first_record + record_offset;
    it->second.sw_queues.insert(d.sw_queues.begin(), d.sw_queues.end());
    it->second.ids.insert(d.ids.begin(), d.ids.end());
  }

  into.errors_total += later.errors_total;
  for (const auto& e : later.errors) {
    if (into.errors.size() >= max_errors) break;
    into.errors.push_back({e.line + line_offset, e.text});
  }
}

LogSummary analyze_in_pieces(std::string_view text, const std::vector<std::size_t>& cuts,
                             const AnalyzerOptions& options) {
  detail::PieceSummary total;
  std::size_t begin = 0;
  bool first = true;
  for (std::size_t k = 0; k <= cuts.size(); ++k) {
    const std::size_t end = k < cuts.size() ? cuts[k] : text.size();
    LogAnalyzer a(options);
    a.feed(text.substr(begin, end - begin));
    if (first) {
      total = a.finish_piece();
      first = false;
    } else {
      merge_into(total, a.finish_piece(), options.max_errors);
    }
    begin = end;
  }
  return detail::resolve_dumps(std::move(total));
}

}  // namespace gpreempt::logs
