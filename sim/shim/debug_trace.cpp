#include "sim/shim/debug_trace.h"

#include <cstdlib>

namespace gpreempt::sim::shim {

bool debug_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("KFDSIM_DEBUG");
    return v && *v && *v != '0';
  }();
  return on;
}

}  // namespace gpreempt::sim::shim
