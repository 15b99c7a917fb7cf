// What a user should know about a log summary that its numbers do not say: the file holds no HIP
// log at all (and what one looks like), dispatches are missing because of the log level, a --pid
// matched nothing. One wording for the CLI, the C ABI and Python (JSON "notes").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "logs/hip_log_analyzer.h"

namespace gpreempt::logs {

// What a HIP runtime log line looks like and how to get one.
extern const char* const kWhatAHipLogIs;

struct LogNotes {
  std::vector<std::string> text;
  bool no_records = false;  // not a single HIP runtime record: the wrong file (the CLI exits 1)
};

// `pid`: the AnalyzerOptions::pid the summary was made with.
LogNotes notes_for(const LogSummary& s, std::optional<int> pid);

}  // namespace gpreempt::logs
