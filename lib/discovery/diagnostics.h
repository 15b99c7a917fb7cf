// What a decoder says about input it could not fully understand: which file (the display name the
// caller passed), which 1-based line, and what was expected there.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gpreempt::discovery {

struct Diagnostic {
  std::string file;
  std::size_t line = 0;  // 1-based; 0 = the file as a whole (e.g. it ended too early)
  std::string message;

  // "file:line: message", the form compilers use, so editors can jump to it.
  std::string to_string() const;
};

// Collects diagnostics for one input; every decoder result carries one.
class DiagnosticSink {
 public:
  explicit DiagnosticSink(std::string file) : file_(std::move(file)) {}
  void add(std::size_t line, std::string message) {
    items_.push_back({file_, line, std::move(message)});
  }
  const std::string& file() const { return file_; }
  std::vector<Diagnostic> take() { return std::move(items_); }
  bool empty() const { return items_.empty(); }

 private:
  std::string file_;
  std::vector<Diagnostic> items_;
};

}  // namespace gpreempt::discovery
