// LogAnalyzer's public face and the end of a stream: finishing, and tying the queue-dump lines of a
// piece to their queues (resolve_dumps), which needs the whole log.
#include "logs/hip_log_analyzer.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "logs/hip_log_impl.h"

namespace gpreempt::logs {

const LogSummary& LogAnalyzer::Impl::finish() {
  if (finished) return sum;
  sum = detail::resolve_dumps(finish_piece());
  return sum;
}

detail::PieceSummary LogAnalyzer::Impl::finish_piece() {
  end_stream();
  finished = true;
  hwq_index.clear();
  last_hwq_key = {-2, 0};
  last_kernel_count = nullptr;
  return {std::move(sum), std::move(hwq_first), std::move(dumps)};
}

LogAnalyzer::LogAnalyzer(AnalyzerOptions options) : impl_(std::make_unique<Impl>(options)) {}
LogAnalyzer::~LogAnalyzer() = default;
void LogAnalyzer::feed(std::string_view chunk) { impl_->feed(chunk); }
const LogSummary& LogAnalyzer::finish() { return impl_->finish(); }
detail::PieceSummary LogAnalyzer::finish_piece() { return impl_->finish_piece(); }

namespace detail {

LogSummary resolve_dumps(PieceSummary piece) {
  LogSummary& s = piece.summary;
  std::vector<std::uint64_t>& first = piece.first_record;
  if (piece.dumps.empty()) return std::move(s);
  // Per address: its first queue (queues are in order of first record) and its pid-less one.
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::unordered_map<std::uint64_t, std::pair<std::size_t, std::size_t>> by_address;
  for (std::size_t i = 0; i < s.hw_queues.size(); ++i) {
    auto [it, inserted] = by_address.try_emplace(s.hw_queues[i].address, i, kNone);
    if (!s.hw_queues[i].pid) it->second.second = i;
  }
  for (auto& [address, d] : piece.dumps) {
    const auto it = by_address.find(address);
    std::size_t target = kNone;
    if (it != by_address.end() && first[it->second.first] < d.first_record) {
      target = it->second.first;
    } else if (it != by_address.end() && it->second.second != kNone) {
      target = it->second.second;  // named by a pid-less record only after the dump
      first[target] = d.first_record;
    } else {
      HwQueueStats q;
      q.address = address;
      s.hw_queues.push_back(std::move(q));
      first.push_back(d.first_record);
      target = s.hw_queues.size() - 1;
    }
    s.hw_queues[target].sw_queues.merge(d.sw_queues);
    s.hw_queues[target].ids.merge(d.ids);
  }
  // Back into order of first appearance (ordinals are distinct: one record names one queue).
  std::vector<std::size_t> order(s.hw_queues.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return first[a] < first[b]; });
  std::vector<HwQueueStats> sorted;
  sorted.reserve(order.size());
  for (std::size_t i : order) sorted.push_back(std::move(s.hw_queues[i]));
  s.hw_queues = std::move(sorted);
  return std::move(s);
}

}  // namespace detail

LogSummary analyze_log(std::string_view text, AnalyzerOptions options) {
  LogAnalyzer a(options);
  a.feed(text);
  return a.finish();
}

}  // namespace gpreempt::logs
