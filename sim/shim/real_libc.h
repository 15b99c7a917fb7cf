// The libc functions the shim interposes, resolved lazily with dlsym(RTLD_NEXT) the first time
// each is needed (Mesa drm-shim does the same). Resolution happens inside the interposer that
// needs it, so a program that never touches a kfd path pays one dlsym per function at most.
#pragma once

#include <dlfcn.h>

#include <atomic>

namespace gpreempt::sim::shim {

template <typename Fn>
Fn resolve_next(const char* name, std::atomic<void*>& cache) {
  void* p = cache.load(std::memory_order_acquire);
  if (!p) {
    p = dlsym(RTLD_NEXT, name);
    cache.store(p, std::memory_order_release);
  }
  return reinterpret_cast<Fn>(p);
}

}  // namespace gpreempt::sim::shim

// REAL(open)(path, flags, mode): the next definition of `open` after the shim, i.e. libc's.
#define REAL(name)                                                                     \
  ([]() {                                                                              \
    static std::atomic<void*> cache{nullptr};                                          \
    return ::gpreempt::sim::shim::resolve_next<decltype(&::name)>(#name, cache);       \
  }())
