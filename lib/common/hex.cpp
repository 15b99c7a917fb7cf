#include "common/hex.h"

#include <charconv>

namespace gpreempt {

std::string hex(std::uint64_t value) {
  char buf[2 + 16];
  buf[0] = '0';
  buf[1] = 'x';
  const auto r = std::to_chars(buf + 2, buf + sizeof buf, value, 16);
  return std::string(buf, r.ptr);
}

}  // namespace gpreempt
