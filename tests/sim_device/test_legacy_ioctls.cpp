// The pre-1.13 ioctls libhsakmt issues while opening the device, with Debian's KFD 1.11 header
// (the layouts and request codes the client compiles with). Only the system header's names are
// used here, never kfd_abi.h's of the same spelling.
#include <cerrno>

#include "device_rig.h"

// After our headers: its macros must not rewrite kfd_abi.h's constexpr names of the same spelling.
// clang-format off
#include <linux/kfd_ioctl.h>
// clang-format on

namespace gpreempt::sim::testing {
namespace {

// ---- pre-1.13 ioctls libhsakmt needs to open the device ---------------------------------------

constexpr int kPid = 100;
using Apertures = ::kfd_process_device_apertures;

TEST(SimDeviceLegacyIoctls, ProcessAperturesCountThenFill) {
  Rig r({}, "mi308x", 2);
  r.spawn(kPid);
  ::kfd_ioctl_get_process_apertures_new_args a{0, 0, 0};
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, a), 0);
  EXPECT_EQ(a.num_of_nodes, 2u);
  a.kfd_process_device_apertures_ptr = r.host.alloc(kPid, 2 * sizeof(Apertures));
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, a), 0);
  auto second = r.host.get<Apertures>(kPid, a.kfd_process_device_apertures_ptr + sizeof(Apertures));
  EXPECT_EQ(second.gpu_id, r.profile_.gpus[1].gpu_id);
  EXPECT_EQ(second.lds_base, 1ull << 48);
  EXPECT_EQ(second.gpuvm_limit, (1ull << 47) - 1);
  a.kfd_process_device_apertures_ptr = 0x10;  // unmapped
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, a), -EFAULT);
}

TEST(SimDeviceLegacyIoctls, AcquireVmAndMemoryPolicyValidateGpuAndArguments) {
  Rig r;
  r.spawn(kPid);
  ::kfd_ioctl_acquire_vm_args vm{5, r.gpu()};
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ACQUIRE_VM, vm), -EINVAL) << "fd 5 not open";
  r.open_render(kPid, 5);
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ACQUIRE_VM, vm), 0);
  vm.gpu_id = 1;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_ACQUIRE_VM, vm), -EINVAL);
  ::kfd_ioctl_set_memory_policy_args m{
      0, 0, r.gpu(), KFD_IOC_CACHE_POLICY_COHERENT, KFD_IOC_CACHE_POLICY_NONCOHERENT, 0};
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_SET_MEMORY_POLICY, m), 0);
  m.default_policy = 2;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_SET_MEMORY_POLICY, m), -EINVAL);
}

TEST(SimDeviceLegacyIoctls, XnackModeQueryAndBusyWithQueues) {
  Rig r;
  r.spawn(kPid);
  ::kfd_ioctl_set_xnack_mode_args mode{-1};
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_SET_XNACK_MODE, mode), 0);
  EXPECT_EQ(mode.xnack_enabled, 0);
  mode.xnack_enabled = 1;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_SET_XNACK_MODE, mode), 0);
  r.new_queue(kPid);
  mode.xnack_enabled = 0;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_SET_XNACK_MODE, mode), -EBUSY);
  mode.xnack_enabled = -1;
  EXPECT_EQ(r.call({kPid, kPid}, AMDKFD_IOC_SET_XNACK_MODE, mode), 0);
  EXPECT_EQ(mode.xnack_enabled, 1);
}

}  // namespace
}  // namespace gpreempt::sim::testing
