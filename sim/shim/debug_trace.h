// KFDSIM_DEBUG=1 (or any value but "0"): the shim prints one stderr line per simulated ioctl, on
// /dev/kfd and on the render nodes alike. Read once, at the first ioctl.
#pragma once

namespace gpreempt::sim::shim {

bool debug_enabled();

}  // namespace gpreempt::sim::shim
