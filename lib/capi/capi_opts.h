// Reading a caller's options struct the libbpf way (OPTS_VALID / OPTS_HAS / OPTS_GET): the struct
// carries its own size `sz`; a smaller one (an older program) lacks the newer fields, which then
// take their defaults; a larger one (a newer program) is accepted only when every byte this
// library does not know — everything after its *last known field*, not after sizeof, whose tail
// padding a newer field may occupy — is zero. Otherwise -E2BIG, as the kernel answers for
// perf_event_attr, sched_attr and open_how, and nothing is done.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/error.h"
#include "gpreempt/version.h"

namespace gpreempt::capi {

// Bytes up to the end of `field`: the size of the struct as this library knows it.
#define GPREEMPT_OFFSETOFEND(type, field) (offsetof(type, field) + sizeof(((type*)nullptr)->field))

// A copy of `*opts` holding the fields within opts->sz (the rest zero), or nullptr-equivalent
// zeroed struct with sz 0 when `opts` is NULL. Throws Error(EINVAL / E2BIG) naming `type_name`.
template <typename T>
T read_opts(const T* opts, std::size_t known_end, const char* type_name) {
  T local{};
  if (!opts) return local;
  const std::size_t sz = opts->sz;
  if (sz < sizeof(std::size_t))
    throw Error(EINVAL, std::string(type_name) + ".sz is " + std::to_string(sz) +
                            "; declare the struct with GPREEMPT_OPTS() or set sz to its sizeof");
  if (sz > known_end) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(opts);
    for (std::size_t i = known_end; i < sz; ++i)
      if (bytes[i])
        throw Error(E2BIG, std::string(type_name) + " sets a field at byte " + std::to_string(i) +
                               " that this library version (" GPREEMPT_VERSION_STRING
                               ") does not know; leave it zero or use a newer libgpreempt");
  }
  std::memcpy(static_cast<void*>(&local), opts, sz < known_end ? sz : known_end);
  local.sz = sz;
  return local;
}

// Whether the caller's struct holds `field` entirely (a size ending inside it means absent, never
// a torn value).
#define GPREEMPT_OPTS_HAS(o, field) \
  ((o).sz >= offsetof(std::remove_reference_t<decltype(o)>, field) + sizeof((o).field))

}  // namespace gpreempt::capi
