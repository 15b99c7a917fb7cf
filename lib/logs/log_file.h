// Reading a log file for the analyzer: sequentially (any stream, stdin included) or, for regular
// files, in parallel pieces split at record boundaries and merged (log_merge.h) into exactly the
// sequential result. This is the I/O side of lib/logs.
#pragma once

#include <cstdint>
#include <string>

#include "logs/hip_log_analyzer.h"

namespace gpreempt::logs {

// Throws std::runtime_error naming the file when it cannot be read. `threads` 0 = one per core;
// a regular file is split only into pieces of at least `min_piece_bytes`. "-" reads stdin.
LogSummary analyze_file(const std::string& path, const AnalyzerOptions& options = {}, unsigned threads = 1,
                        std::uint64_t min_piece_bytes = 16u << 20);

}  // namespace gpreempt::logs
