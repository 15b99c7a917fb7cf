// Merging the summaries of consecutive pieces of one log, so a file can be analyzed in parallel
// and still give exactly the sequential result. Pure.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "logs/hip_log_analyzer.h"

namespace gpreempt::logs {

// Appends `later` (the piece of text right after what `into` covered) to `into`: counts add, sets
// unite, first appearances keep their order, line numbers and record ordinals of `later` are
// shifted by what `into` already holds. Queues are matched by (pid, address) only; the dump lines'
// queues are left to detail::resolve_dumps on the whole. `max_errors` caps the kept error texts as
// the analyzer does.
void merge_into(detail::PieceSummary& into, const detail::PieceSummary& later,
                std::size_t max_errors);

// `text` analyzed as pieces cut at the given offsets (each must start a line that starts a record,
// as analyze_file cuts), merged and resolved: the same as analyze_log(text) by construction.
LogSummary analyze_in_pieces(std::string_view text, const std::vector<std::size_t>& cuts,
                             const AnalyzerOptions& options = {});

}  // namespace gpreempt::logs
