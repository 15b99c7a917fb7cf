// libFuzzer target: the streaming HIP log analyzer (lib/logs). Any bytes must give the same JSON
// whether fed whole, in chunks of any sizes (chosen by the input), or as pieces cut at record
// starts and merged (what `log analyze --threads N` does); no crash, no undefined behaviour, and
// bounded error texts. Any difference traps.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "logs/hip_log_analyzer.h"
#include "logs/json.h"
#include "logs/log_merge.h"
#include "logs/log_record.h"

using namespace gpreempt::logs;

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

std::string json_of(const LogSummary& s) {
  return to_json(s).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  // The first two bytes choose the options and the chunking; the rest is the log.
  const unsigned knobs = data[0], seed = data[1];
  const std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);
  AnalyzerOptions o;
  if (knobs & 1) o.max_record_bytes = 64 + (seed % 8) * 32;  // short records: the truncation paths
  if (knobs & 2) o.max_errors = seed % 4;
  if (knobs & 4) o.pid = static_cast<int>(seed % 3);

  const LogSummary whole = analyze_log(text, o);
  const std::string want = json_of(whole);
  for (const auto& e : whole.errors) check(e.text.size() <= 450);

  // Chunks of 1..16 bytes, the sizes cycling through the input's own bytes.
  LogAnalyzer chunked(o);
  for (std::size_t pos = 0, k = 0; pos < text.size(); ++k) {
    const std::size_t n = 1 + static_cast<unsigned char>(text[k % text.size()]) % 16;
    chunked.feed(text.substr(pos, n));
    pos += n;
  }
  check(json_of(chunked.finish()) == want);

  // Pieces cut at record starts, where analyze_file cuts; which ones, the seed decides.
  std::vector<std::size_t> cuts;
  for (std::size_t i = 1, k = 0; i < text.size(); ++i)
    if (text[i - 1] == '\n' && detail::is_record_start(text.substr(i)) && ((seed >> (k++ % 8)) & 1))
      cuts.push_back(i);
  check(json_of(analyze_in_pieces(text, cuts, o)) == want);
  return 0;
}
