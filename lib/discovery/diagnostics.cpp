#include "discovery/diagnostics.h"

namespace gpreempt::discovery {

std::string Diagnostic::to_string() const {
  if (line == 0) return file + ": " + message;
  return file + ":" + std::to_string(line) + ": " + message;
}

std::string escaped(std::string_view raw, std::size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  const std::size_t n = raw.size() < max_bytes ? raw.size() : max_bytes;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(raw[i]);
    switch (c) {
      case '\0': out += "\\0"; continue;
      case '\t': out += "\\t"; continue;
      case '\r': out += "\\r"; continue;
      case '\n': out += "\\n"; continue;
      case '\\': out += "\\\\"; continue;
      case '"': out += "\\\""; continue;
      default: break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
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
