// The per-thread detail message behind gpreempt_last_error(), and the one mapping of exceptions to
// -errno, shared by every lib/capi source so that each entry point, whichever file defines it,
// reports the same way through the same slot.
#pragma once

#include <cerrno>
#include <exception>
#include <new>
#include <string>
#include <utility>

#include "common/error.h"

namespace gpreempt::capi {

inline thread_local std::string t_last_error;

inline int fail(int code, std::string message) {
  t_last_error = std::move(message);
  return -code;
}

// Runs `fn`, mapping every exception to -errno and a detail message.
template <class F>
int guarded(F&& fn) {
  try {
    t_last_error.clear();
    return fn();
  } catch (const Error& e) {
    return fail(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return fail(ENOMEM, "out of memory");
  } catch (const std::exception& e) {
    return fail(EIO, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(EIO, "internal error: unknown exception");
  }
}

}  // namespace gpreempt::capi
