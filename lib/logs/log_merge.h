// Merging the summaries of consecutive pieces of one log, so a file can be analyzed in parallel
// and still give exactly the sequential result. Pure.
#pragma once

#include <cstdint>

#include "logs/hip_log_analyzer.h"

namespace gpreempt::logs {

// Appends `later` (the summary of the text right after what `into` covered) to `into`: counts
// add, sets unite, first appearances keep their order, line numbers of `later` are shifted by the
// lines `into` already holds. `max_errors` caps the kept error texts as the analyzer does.
void merge_into(LogSummary& into, const LogSummary& later, std::size_t max_errors);

}  // namespace gpreempt::logs
