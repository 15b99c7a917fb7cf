// The one error type of the C++ core: a positive errno-style code plus a sentence for humans.
//
// The core throws gpreempt::Error; the C ABI turns it into a negative return value and a per-thread
// detail message, the Python module into an exception. The code is what programs test; the message
// says what happened, to which process or queue, and what to do about it.
#pragma once

#include <stdexcept>
#include <string>

namespace gpreempt {

class Error : public std::runtime_error {
 public:
  Error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  // Positive errno value (EPERM, ESRCH, ...).
  int code() const noexcept { return code_; }

 private:
  int code_;
};

// strerror_r that always returns the text (glibc's GNU variant vs. the POSIX one).
std::string errno_text(int code);

}  // namespace gpreempt
