// libFuzzer target: the HIP log record reader (lib/logs/log_record.h). For every line of the
// input, parse_record must stay inside the line, give a message inside it, and give exactly the
// same result with the bracket cache (filled by the previous lines, as in the analyzer) as without
// it. Any difference traps.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "logs/log_record.h"

using namespace gpreempt::logs::detail;

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

bool inside(std::string_view part, std::string_view whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  BracketCache cache;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(begin, end - begin);
    LogRecord plain, cached;
    const bool ok = parse_record(line, plain);
    const bool cached_ok = parse_record(line, cached, &cache);
    check(ok == cached_ok);
    check(ok == false || is_record_start(line));
    if (ok) {
      check(plain.level == line[1] - '0');
      check(inside(plain.file, line) && inside(plain.tid, line) && inside(plain.message, line));
      check(plain.file == cached.file && plain.pid == cached.pid && plain.tid == cached.tid);
      check(plain.message.data() == cached.message.data() &&
            plain.message.size() == cached.message.size());
      check(plain.message_start == cached.message_start);
      check(plain.bracket == 0);
    }
    begin = end + 1;
  }
  return 0;
}
