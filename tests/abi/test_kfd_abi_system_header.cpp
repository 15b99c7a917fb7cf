// Where Debian's <linux/kfd_ioctl.h> (KFD 1.11) also defines a struct, ours must be identical.
// Checked at compile time; the system header is included after ours so that its macros cannot
// rewrite our constexpr names.
#include <cstddef>
#include <cstdint>

#include <gtest/gtest.h>

#include "gpreempt/kfd_abi.h"

// Taken before the system header's macros of the same names exist.
namespace before_system_header {
namespace k = gpreempt::kfd;
constexpr uint32_t get_version = k::AMDKFD_IOC_GET_VERSION;
constexpr uint32_t create_queue_v116 = k::AMDKFD_IOC_CREATE_QUEUE_V116;
constexpr uint32_t destroy_queue = k::AMDKFD_IOC_DESTROY_QUEUE;
constexpr uint32_t update_queue = k::AMDKFD_IOC_UPDATE_QUEUE;
constexpr uint32_t queue_type_compute_aql = k::KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
constexpr uint32_t max_queue_priority = k::KFD_MAX_QUEUE_PRIORITY;
}  // namespace before_system_header

#if __has_include(<linux/kfd_ioctl.h>)
#include <linux/kfd_ioctl.h>
#define GP_HAVE_SYSTEM_KFD_HEADER 1
#endif

namespace ours = gpreempt::kfd;

#ifdef GP_HAVE_SYSTEM_KFD_HEADER
#define SAME_SIZE(T) static_assert(sizeof(ours::T) == sizeof(::T), #T " size differs")
#define SAME_FIELD(T, m)                                                                   \
  static_assert(offsetof(ours::T, m) == offsetof(::T, m), #T "." #m " offset differs"); \
  static_assert(sizeof(((ours::T*)nullptr)->m) == sizeof(((::T*)nullptr)->m), #T "." #m " size differs")

SAME_SIZE(kfd_ioctl_get_version_args);
SAME_FIELD(kfd_ioctl_get_version_args, major_version);
SAME_FIELD(kfd_ioctl_get_version_args, minor_version);
// 1.11's create_queue_args is the 88-byte layout; ours extends it with 1.17/1.22 fields.
static_assert(sizeof(::kfd_ioctl_create_queue_args) == ours::KFD_CREATE_QUEUE_ARGS_SIZE_V116);
SAME_FIELD(kfd_ioctl_create_queue_args, ring_base_address);
SAME_FIELD(kfd_ioctl_create_queue_args, write_pointer_address);
SAME_FIELD(kfd_ioctl_create_queue_args, read_pointer_address);
SAME_FIELD(kfd_ioctl_create_queue_args, doorbell_offset);
SAME_FIELD(kfd_ioctl_create_queue_args, ring_size);
SAME_FIELD(kfd_ioctl_create_queue_args, gpu_id);
SAME_FIELD(kfd_ioctl_create_queue_args, queue_type);
SAME_FIELD(kfd_ioctl_create_queue_args, queue_percentage);
SAME_FIELD(kfd_ioctl_create_queue_args, queue_priority);
SAME_FIELD(kfd_ioctl_create_queue_args, queue_id);
SAME_FIELD(kfd_ioctl_create_queue_args, eop_buffer_address);
SAME_FIELD(kfd_ioctl_create_queue_args, eop_buffer_size);
SAME_FIELD(kfd_ioctl_create_queue_args, ctx_save_restore_address);
SAME_FIELD(kfd_ioctl_create_queue_args, ctx_save_restore_size);
SAME_FIELD(kfd_ioctl_create_queue_args, ctl_stack_size);
SAME_SIZE(kfd_ioctl_destroy_queue_args);
SAME_FIELD(kfd_ioctl_destroy_queue_args, queue_id);
SAME_SIZE(kfd_ioctl_update_queue_args);
SAME_FIELD(kfd_ioctl_update_queue_args, ring_base_address);
SAME_FIELD(kfd_ioctl_update_queue_args, queue_id);
SAME_FIELD(kfd_ioctl_update_queue_args, ring_size);
SAME_FIELD(kfd_ioctl_update_queue_args, queue_percentage);
SAME_FIELD(kfd_ioctl_update_queue_args, queue_priority);
static_assert(before_system_header::get_version == AMDKFD_IOC_GET_VERSION);
static_assert(before_system_header::create_queue_v116 == AMDKFD_IOC_CREATE_QUEUE);
static_assert(before_system_header::destroy_queue == AMDKFD_IOC_DESTROY_QUEUE);
static_assert(before_system_header::update_queue == AMDKFD_IOC_UPDATE_QUEUE);
static_assert(before_system_header::queue_type_compute_aql == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL);
static_assert(before_system_header::max_queue_priority == KFD_MAX_QUEUE_PRIORITY);

TEST(KfdAbiSystemHeader, SharedStructsAreIdenticalAtCompileTime) {
  // The static_asserts above are the test; this records that they were compiled in.
  SUCCEED() << "system header KFD " << KFD_IOCTL_MAJOR_VERSION << "." << KFD_IOCTL_MINOR_VERSION;
}
#else
TEST(KfdAbiSystemHeader, SharedStructsAreIdenticalAtCompileTime) {
  GTEST_SKIP() << "<linux/kfd_ioctl.h> is not installed (package linux-libc-dev)";
}
#endif
