#include "common/error.h"

#include <cstring>

namespace gpreempt {

namespace {
// Overloads pick whichever strerror_r flavour the C library declares.
[[maybe_unused]] std::string from_strerror_r(int rc, const char* buf) {
  return rc == 0 ? std::string(buf) : std::string("unknown error");
}
[[maybe_unused]] std::string from_strerror_r(const char* msg, const char*) { return msg; }
}  // namespace

std::string errno_text(int code) {
  char buf[256] = {};
  return from_strerror_r(strerror_r(code, buf, sizeof buf), buf);
}

}  // namespace gpreempt
