// libFuzzer target: lib/ptrace's /proc/<tid>/status field parsers (TracerPid, Tgid, PPid) on
// arbitrary bytes.
#include "fuzz_support.h"
#include "ptrace/proc_status.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpreempt;
  const std::string_view text = fuzz::as_text(data, size);
  (void)ptrace::parse_tracer_pid(text);
  (void)ptrace::parse_tgid(text);
  (void)ptrace::parse_ppid(text);
  return 0;
}
