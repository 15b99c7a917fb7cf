// Oracles shared by the libFuzzer targets: beyond "no crash, no sanitizer report", what every
// decoder result must satisfy whatever the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string_view>
#include <vector>

#include "discovery/diagnostics.h"

namespace gpreempt::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// libFuzzer reports an abort() as a crash, with the input that caused it.
[[noreturn]] inline void violated(const char* what) {
  std::fprintf(stderr, "fuzz oracle violated: %s\n", what);
  std::abort();
}

// A bounded list of short, printable diagnostics (see discovery/diagnostics.h).
inline void check_diagnostics(const std::vector<discovery::Diagnostic>& ds) {
  if (ds.size() > discovery::kMaxDiagnostics + 1) violated("more diagnostics than the bound");
  for (const auto& d : ds) {
    if (d.message.size() > 4 * discovery::kExcerptBytes + 400) violated("diagnostic message too long");
    for (char c : d.message)
      if (c < 0x20 || c >= 0x7f) violated("raw control or non-ASCII byte in a diagnostic");
  }
}

// A decoder result of the wrong-kind shape carries exactly one diagnostic.
template <class Result>
void check_result(const Result& r) {
  check_diagnostics(r.diagnostics);
  if (r.looks_like && (r.complete || r.diagnostics.size() != 1)) violated("wrong-kind result not reduced to one diagnostic");
}

}  // namespace gpreempt::fuzz
