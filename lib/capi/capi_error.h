// The per-thread detail message behind gpreempt_last_error(), shared by every lib/capi source so
// that each entry point, whichever file defines it, reports through the same slot.
#pragma once

#include <string>

namespace gpreempt::capi {

inline thread_local std::string t_last_error;

}  // namespace gpreempt::capi
