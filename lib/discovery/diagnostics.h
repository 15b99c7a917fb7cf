// What a decoder says about input it could not fully understand: which file (the display name the
// caller passed), which 1-based line, and what was expected there.
//
// Bounded whatever the input: a sink keeps the first kMaxDiagnostics problems and counts the rest
// (one closing entry says how many more), and a message quotes at most kExcerptBytes of an input
// line with control and non-ASCII bytes escaped, so neither memory nor a terminal suffers from a
// 20 MB binary file handed to a decoder.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpreempt::discovery {

inline constexpr std::size_t kMaxDiagnostics = 20;
inline constexpr std::size_t kExcerptBytes = 80;

struct Diagnostic {
  std::string file;
  std::size_t line = 0;  // 1-based; 0 = the file as a whole (e.g. it ended too early)
  std::string message;
  // Non-zero only on the closing entry of a full sink: how many further problems it stands for.
  std::size_t omitted = 0;

  // "file:line: message", the form compilers use, so editors can jump to it.
  std::string to_string() const;
};

// `raw` as printable ASCII: at most `max_bytes` of it, each byte outside 0x20..0x7e (and the
// backslash and double quote) escaped as \0, \t, \r, \n, \\, \" or \xNN (common/escape.h's
// EscapeStyle::kPrintableAscii; log quotes use the same code in their own style).
std::string escaped(std::string_view raw, std::size_t max_bytes = kExcerptBytes);
// How messages quote input: "<escaped first kExcerptBytes>", followed by ... when the text was
// longer (or `continues`: the caller already holds only the start of a longer line).
std::string quote_line(std::string_view raw, bool continues = false);

// Every problem a list stands for, including those a full sink only counted.
std::size_t problem_count(const std::vector<Diagnostic>& diagnostics);

// Collects diagnostics for one input; every decoder result carries one.
class DiagnosticSink {
 public:
  explicit DiagnosticSink(std::string file, std::size_t limit = kMaxDiagnostics)
      : file_(std::move(file)), limit_(limit) {}
  void add(std::size_t line, std::string message);
  const std::string& file() const { return file_; }
  std::size_t count() const { return items_.size() + omitted_; }
  bool empty() const { return count() == 0; }
  void clear() {
    items_.clear();
    omitted_ = 0;
  }
  // The kept diagnostics, then (when some were only counted) one entry "N more problem(s) ...".
  std::vector<Diagnostic> take();

 private:
  std::string file_;
  std::size_t limit_;
  std::vector<Diagnostic> items_;
  std::size_t omitted_ = 0;
};

}  // namespace gpreempt::discovery
