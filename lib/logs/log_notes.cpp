#include "logs/log_notes.h"

namespace gpreempt::logs {

const char* const kWhatAHipLogIs =
    "a HIP log has lines like ':3:hip_memory.cpp :772 : 20159700715 us: [pid:459769 tid: "
    "0x7f8edc1c4400] "
    "hipMalloc: Returned hipSuccess', which the HIP runtime writes to stderr when the program runs "
    "with "
    "AMD_LOG_LEVEL=3 (AMD_LOG_LEVEL=4 adds every kernel dispatch), e.g. AMD_LOG_LEVEL=4 ./app 2> "
    "app.log";

LogNotes notes_for(const LogSummary& s, std::optional<int> pid) {
  LogNotes n;
  if (s.recognized == 0 && s.other_pids == 0) {
    n.no_records = true;
    n.text.push_back(std::string("no HIP runtime log records: ") + kWhatAHipLogIs);
    return n;
  }
  if (s.recognized == 0 && pid)
    n.text.push_back("no records of pid " + std::to_string(*pid) + ": the log's " +
                     std::to_string(s.other_pids) + " record(s) are of other processes");
  if (s.dispatches == 0 && !s.levels.empty() && s.levels.rbegin()->first < 4)
    n.text.push_back("0 dispatches: this log's highest level is " +
                     std::to_string(s.levels.rbegin()->first) +
                     "; kernel dispatch packets ('HWq=0x…, … Dispatch Header = …') are logged from "
                     "AMD_LOG_LEVEL=4 on");
  return n;
}

}  // namespace gpreempt::logs
