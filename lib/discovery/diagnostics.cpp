#include "discovery/diagnostics.h"

#include "common/escape.h"

namespace gpreempt::discovery {

std::string Diagnostic::to_string() const {
  if (line == 0) return file + ": " + message;
  return file + ":" + std::to_string(line) + ": " + message;
}

std::string escaped(std::string_view raw, std::size_t max_bytes) {
  return escape(raw, EscapeStyle::kPrintableAscii, {.max_input = max_bytes}).text;
}

std::string quote_line(std::string_view raw, bool continues) {
  std::string out = "\"" + escaped(raw, kExcerptBytes) + "\"";
  if (continues || raw.size() > kExcerptBytes) out += "...";
  return out;
}

std::size_t problem_count(const std::vector<Diagnostic>& ds) {
  std::size_t n = 0;
  for (const auto& d : ds) n += d.omitted != 0 ? d.omitted : 1;
  return n;
}

void DiagnosticSink::add(std::size_t line, std::string message) {
  if (items_.size() < limit_)
    items_.push_back({file_, line, std::move(message)});
  else
    ++omitted_;
}

std::vector<Diagnostic> DiagnosticSink::take() {
  std::vector<Diagnostic> out = std::move(items_);
  if (omitted_ != 0)
    out.push_back({file_, 0,
                   std::to_string(omitted_) + " more problem(s) not shown (only the first " +
                       std::to_string(limit_) + " are listed)",
                   omitted_});
  items_.clear();
  omitted_ = 0;
  return out;
}

}  // namespace gpreempt::discovery
