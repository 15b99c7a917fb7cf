#include "logs/excerpt.h"

#include "common/escape.h"

namespace gpreempt::logs {

std::string excerpt(std::string_view text, std::size_t max_bytes) {
  Escaped e = escape(text, EscapeStyle::kControlBytes, {.max_output = max_bytes});
  if (e.consumed < text.size()) e.text += "... (" + std::to_string(text.size()) + " bytes)";
  return std::move(e.text);
}

}  // namespace gpreempt::logs
