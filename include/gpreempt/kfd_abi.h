// Our own copy of the KFD user ABI (ioctl version 1.22, plus the 1.16 layouts that differ).
//
// Why our own: Debian's <linux/kfd_ioctl.h> is KFD 1.11 and has no debugger API at all.
// Every number here is checked by tests/abi against the table obtained by compiling the kernel's
// KFD 1.22 uapi header (docs/kfd-interface.md#abi-numbers) and, where the system header also
// defines a struct, against that header at compile time.
//
// Everything lives in namespace gpreempt::kfd and is constexpr (no macros), so this header can be
// included next to the system header without either one rewriting the other's names.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpreempt::kfd {

// ---- ioctl request encoding (asm-generic/ioctl.h: nr 8 bits, type 8, size 14, dir 2) ----------
inline constexpr uint32_t IOC_NONE = 0;
inline constexpr uint32_t IOC_WRITE = 1;
inline constexpr uint32_t IOC_READ = 2;
constexpr uint32_t ioc(uint32_t dir, uint32_t type, uint32_t nr, uint32_t size) {
  return (dir << 30) | (size << 16) | (type << 8) | nr;
}
constexpr uint32_t ioc_nr(unsigned long req) { return static_cast<uint32_t>(req & 0xff); }
constexpr uint32_t ioc_type(unsigned long req) { return static_cast<uint32_t>((req >> 8) & 0xff); }
constexpr uint32_t ioc_size(unsigned long req) { return static_cast<uint32_t>((req >> 16) & 0x3fff); }
constexpr uint32_t ioc_dir(unsigned long req) { return static_cast<uint32_t>((req >> 30) & 0x3); }

inline constexpr uint32_t KFD_IOCTL_MAJOR_VERSION = 1;
inline constexpr uint32_t KFD_IOCTL_MINOR_VERSION = 22;
// The debugger API (RUNTIME_ENABLE, DBG_TRAP) exists from 1.13; ROCdbgapi accepts [1.13, 2.0).
inline constexpr uint32_t KFD_DEBUGGER_API_MIN_MINOR = 13;
inline constexpr uint32_t AMDKFD_IOCTL_BASE = 0x4b;  // 'K'
inline constexpr uint32_t AMDKFD_COMMAND_START = 0x01;
inline constexpr uint32_t AMDKFD_COMMAND_END = 0x28;        // 1.22 (CREATE_PROCESS is 0x27)
inline constexpr uint32_t AMDKFD_COMMAND_END_V116 = 0x27;   // 1.13 .. 1.18

// ---- GET_VERSION -----------------------------------------------------------------------------
struct kfd_ioctl_get_version_args {
  uint32_t major_version;
  uint32_t minor_version;
};

// ---- CREATE / DESTROY / UPDATE_QUEUE ------------------------------------------------------------
inline constexpr uint32_t KFD_IOC_QUEUE_TYPE_COMPUTE = 0x0;
inline constexpr uint32_t KFD_IOC_QUEUE_TYPE_SDMA = 0x1;
inline constexpr uint32_t KFD_IOC_QUEUE_TYPE_COMPUTE_AQL = 0x2;
inline constexpr uint32_t KFD_IOC_QUEUE_TYPE_SDMA_XGMI = 0x3;
inline constexpr uint32_t KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID = 0x4;  // 1.17+
inline constexpr uint32_t KFD_MAX_QUEUE_PERCENTAGE = 100;
inline constexpr uint32_t KFD_MAX_QUEUE_PRIORITY = 15;
inline constexpr uint32_t KFD_MIN_QUEUE_RING_SIZE = 1024;

struct kfd_ioctl_create_queue_args {
  uint64_t ring_base_address;         // to KFD
  uint64_t write_pointer_address;     // to KFD
  uint64_t read_pointer_address;      // to KFD
  uint64_t doorbell_offset;           // from KFD
  uint32_t ring_size;                 // to KFD
  uint32_t gpu_id;                    // to KFD
  uint32_t queue_type;                // to KFD
  uint32_t queue_percentage;          // to KFD
  uint32_t queue_priority;            // to KFD
  uint32_t queue_id;                  // from KFD
  uint64_t eop_buffer_address;        // to KFD
  uint64_t eop_buffer_size;           // to KFD
  uint64_t ctx_save_restore_address;  // to KFD
  uint32_t ctx_save_restore_size;     // to KFD
  uint32_t ctl_stack_size;            // to KFD
  uint32_t sdma_engine_id;            // to KFD (1.17+)
  uint32_t metadata_ring_size;        // to KFD (1.22+; `pad` in 1.17..1.21)
};

// The same struct as compiled from a <= 1.16 header: it ends after ctl_stack_size.
inline constexpr std::size_t KFD_CREATE_QUEUE_ARGS_SIZE_V116 = 88;

struct kfd_ioctl_destroy_queue_args {
  uint32_t queue_id;
  uint32_t pad;
};

struct kfd_ioctl_update_queue_args {
  uint64_t ring_base_address;
  uint32_t queue_id;
  uint32_t ring_size;
  uint32_t queue_percentage;
  uint32_t queue_priority;
};

// ---- RUNTIME_ENABLE ---------------------------------------------------------------------------
inline constexpr uint32_t KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK = 1;
inline constexpr uint32_t KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK = 2;

struct kfd_ioctl_runtime_enable_args {
  uint64_t r_debug;
  uint32_t mode_mask;
  uint32_t capabilities_mask;
};

inline constexpr uint32_t DEBUG_RUNTIME_STATE_DISABLED = 0;
inline constexpr uint32_t DEBUG_RUNTIME_STATE_ENABLED = 1;
inline constexpr uint32_t DEBUG_RUNTIME_STATE_ENABLED_BUSY = 2;
inline constexpr uint32_t DEBUG_RUNTIME_STATE_ENABLED_ERROR = 3;

struct kfd_runtime_info {
  uint64_t r_debug;
  uint32_t runtime_state;
  uint32_t ttmp_setup;
};

// ---- Exception codes ----------------------------------------------------------------------------
enum kfd_dbg_trap_exception_code : uint32_t {
  EC_NONE = 0,
  EC_QUEUE_WAVE_ABORT = 1,
  EC_QUEUE_WAVE_TRAP = 2,
  EC_QUEUE_WAVE_MATH_ERROR = 3,
  EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION = 4,
  EC_QUEUE_WAVE_MEMORY_VIOLATION = 5,
  EC_QUEUE_WAVE_APERTURE_VIOLATION = 6,
  EC_QUEUE_PACKET_DISPATCH_DIM_INVALID = 16,
  EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID = 17,
  EC_QUEUE_PACKET_DISPATCH_CODE_INVALID = 18,
  EC_QUEUE_PACKET_RESERVED = 19,
  EC_QUEUE_PACKET_UNSUPPORTED = 20,
  EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID = 21,
  EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID = 22,
  EC_QUEUE_PACKET_VENDOR_UNSUPPORTED = 23,
  EC_QUEUE_PREEMPTION_ERROR = 30,
  EC_QUEUE_NEW = 31,
  EC_DEVICE_QUEUE_DELETE = 32,
  EC_DEVICE_MEMORY_VIOLATION = 33,
  EC_DEVICE_RAS_ERROR = 34,
  EC_DEVICE_FATAL_HALT = 35,
  EC_DEVICE_NEW = 36,
  EC_PROCESS_RUNTIME = 48,
  EC_PROCESS_DEVICE_REMOVE = 49,
  EC_MAX = 50,
};

constexpr uint64_t KFD_EC_MASK(uint32_t ec) { return 1ULL << (ec - 1); }

inline constexpr uint64_t KFD_EC_MASK_QUEUE =
    KFD_EC_MASK(EC_QUEUE_WAVE_ABORT) | KFD_EC_MASK(EC_QUEUE_WAVE_TRAP) |
    KFD_EC_MASK(EC_QUEUE_WAVE_MATH_ERROR) | KFD_EC_MASK(EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION) |
    KFD_EC_MASK(EC_QUEUE_WAVE_MEMORY_VIOLATION) | KFD_EC_MASK(EC_QUEUE_WAVE_APERTURE_VIOLATION) |
    KFD_EC_MASK(EC_QUEUE_PACKET_DISPATCH_DIM_INVALID) |
    KFD_EC_MASK(EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID) |
    KFD_EC_MASK(EC_QUEUE_PACKET_DISPATCH_CODE_INVALID) | KFD_EC_MASK(EC_QUEUE_PACKET_RESERVED) |
    KFD_EC_MASK(EC_QUEUE_PACKET_UNSUPPORTED) |
    KFD_EC_MASK(EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID) |
    KFD_EC_MASK(EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID) |
    KFD_EC_MASK(EC_QUEUE_PACKET_VENDOR_UNSUPPORTED) | KFD_EC_MASK(EC_QUEUE_PREEMPTION_ERROR) |
    KFD_EC_MASK(EC_QUEUE_NEW);
inline constexpr uint64_t KFD_EC_MASK_DEVICE =
    KFD_EC_MASK(EC_DEVICE_QUEUE_DELETE) | KFD_EC_MASK(EC_DEVICE_RAS_ERROR) |
    KFD_EC_MASK(EC_DEVICE_FATAL_HALT) | KFD_EC_MASK(EC_DEVICE_MEMORY_VIOLATION) |
    KFD_EC_MASK(EC_DEVICE_NEW);
inline constexpr uint64_t KFD_EC_MASK_PROCESS =
    KFD_EC_MASK(EC_PROCESS_RUNTIME) | KFD_EC_MASK(EC_PROCESS_DEVICE_REMOVE);
inline constexpr uint64_t KFD_EC_MASK_PACKET =
    KFD_EC_MASK(EC_QUEUE_PACKET_DISPATCH_DIM_INVALID) |
    KFD_EC_MASK(EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID) |
    KFD_EC_MASK(EC_QUEUE_PACKET_DISPATCH_CODE_INVALID) | KFD_EC_MASK(EC_QUEUE_PACKET_RESERVED) |
    KFD_EC_MASK(EC_QUEUE_PACKET_UNSUPPORTED) |
    KFD_EC_MASK(EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID) |
    KFD_EC_MASK(EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID) |
    KFD_EC_MASK(EC_QUEUE_PACKET_VENDOR_UNSUPPORTED);

// The wave exceptions ROCdbgapi clears when it suspends queues.
inline constexpr uint64_t KFD_EC_MASK_WAVE_EXCEPTIONS =
    KFD_EC_MASK(EC_QUEUE_WAVE_ABORT) | KFD_EC_MASK(EC_QUEUE_WAVE_TRAP) |
    KFD_EC_MASK(EC_QUEUE_WAVE_MATH_ERROR) | KFD_EC_MASK(EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION) |
    KFD_EC_MASK(EC_QUEUE_WAVE_MEMORY_VIOLATION) | KFD_EC_MASK(EC_QUEUE_WAVE_APERTURE_VIOLATION);

// ---- DBG_TRAP ------------------------------------------------------------------------------------
enum kfd_dbg_trap_operations : uint32_t {
  KFD_IOC_DBG_TRAP_ENABLE = 0,
  KFD_IOC_DBG_TRAP_DISABLE = 1,
  KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT = 2,
  KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED = 3,
  KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE = 4,
  KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE = 5,
  KFD_IOC_DBG_TRAP_SUSPEND_QUEUES = 6,
  KFD_IOC_DBG_TRAP_RESUME_QUEUES = 7,
  KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH = 8,
  KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH = 9,
  KFD_IOC_DBG_TRAP_SET_FLAGS = 10,
  KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT = 11,
  KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO = 12,
  KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT = 13,
  KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT = 14,
};

// Per-queue status written back into the queue-id array by SUSPEND/RESUME_QUEUES.
inline constexpr uint32_t KFD_DBG_QUEUE_ERROR_BIT = 30;
inline constexpr uint32_t KFD_DBG_QUEUE_INVALID_BIT = 31;
inline constexpr uint32_t KFD_DBG_QUEUE_ERROR_MASK = 1u << KFD_DBG_QUEUE_ERROR_BIT;
inline constexpr uint32_t KFD_DBG_QUEUE_INVALID_MASK = 1u << KFD_DBG_QUEUE_INVALID_BIT;
inline constexpr uint32_t KFD_DBG_QUEUE_ID_MASK = ~(KFD_DBG_QUEUE_ERROR_MASK | KFD_DBG_QUEUE_INVALID_MASK);

inline constexpr uint32_t KFD_INVALID_FD = 0xffffffffu;
// Grace period value that leaves the scheduler's default (CP_IQ_WAIT_TIME2.SCH_WAVE) alone.
inline constexpr uint32_t KFD_USE_DEFAULT_GRACE_PERIOD = 0xffffffffu;

inline constexpr uint32_t KFD_DBG_TRAP_OVERRIDE_OR = 0;
inline constexpr uint32_t KFD_DBG_TRAP_OVERRIDE_REPLACE = 1;
inline constexpr uint32_t KFD_DBG_TRAP_MASK_FP_INVALID = 1;
inline constexpr uint32_t KFD_DBG_TRAP_MASK_FP_INPUT_DENORMAL = 2;
inline constexpr uint32_t KFD_DBG_TRAP_MASK_FP_DIVIDE_BY_ZERO = 4;
inline constexpr uint32_t KFD_DBG_TRAP_MASK_FP_OVERFLOW = 8;
inline constexpr uint32_t KFD_DBG_TRAP_MASK_FP_UNDERFLOW = 16;
inline constexpr uint32_t KFD_DBG_TRAP_MASK_FP_INEXACT = 32;
inline constexpr uint32_t KFD_DBG_TRAP_MASK_INT_DIVIDE_BY_ZERO = 64;
inline constexpr uint32_t KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH = 128;
inline constexpr uint32_t KFD_DBG_TRAP_MASK_DBG_MEMORY_VIOLATION = 256;
inline constexpr uint32_t KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START = 1u << 30;
inline constexpr uint32_t KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_END = 1u << 31;
inline constexpr uint32_t KFD_DBG_TRAP_WAVE_LAUNCH_MODE_NORMAL = 0;
inline constexpr uint32_t KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT = 1;
inline constexpr uint32_t KFD_DBG_TRAP_WAVE_LAUNCH_MODE_DEBUG = 3;
inline constexpr uint32_t KFD_DBG_TRAP_ADDRESS_WATCH_MODE_READ = 0;
inline constexpr uint32_t KFD_DBG_TRAP_ADDRESS_WATCH_MODE_NONREAD = 1;
inline constexpr uint32_t KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ATOMIC = 2;
inline constexpr uint32_t KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ALL = 3;
inline constexpr uint32_t KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP = 1;
inline constexpr uint32_t KFD_DBG_TRAP_FLAG_SINGLE_ALU_OP = 2;
inline constexpr uint32_t KFD_DBG_TRAP_FLAG_LDS_OUT_OF_ADDR_RANGE = 4;

struct kfd_ioctl_dbg_trap_enable_args {
  uint64_t exception_mask;
  uint64_t rinfo_ptr;
  uint32_t rinfo_size;
  uint32_t dbg_fd;
};
struct kfd_ioctl_dbg_trap_send_runtime_event_args {
  uint64_t exception_mask;
  uint32_t gpu_id;
  uint32_t queue_id;
};
struct kfd_ioctl_dbg_trap_set_exceptions_enabled_args {
  uint64_t exception_mask;
};
struct kfd_ioctl_dbg_trap_set_wave_launch_override_args {
  uint32_t override_mode;
  uint32_t enable_mask;
  uint32_t support_request_mask;
  uint32_t pad;
};
struct kfd_ioctl_dbg_trap_set_wave_launch_mode_args {
  uint32_t launch_mode;
  uint32_t pad;
};
struct kfd_ioctl_dbg_trap_suspend_queues_args {
  uint64_t exception_mask;
  uint64_t queue_array_ptr;
  uint32_t num_queues;
  uint32_t grace_period;
};
struct kfd_ioctl_dbg_trap_resume_queues_args {
  uint64_t queue_array_ptr;
  uint32_t num_queues;
  uint32_t pad;
};
struct kfd_ioctl_dbg_trap_set_node_address_watch_args {
  uint64_t address;
  uint32_t mode;
  uint32_t mask;
  uint32_t gpu_id;
  uint32_t id;
};
struct kfd_ioctl_dbg_trap_clear_node_address_watch_args {
  uint32_t gpu_id;
  uint32_t id;
};
struct kfd_ioctl_dbg_trap_set_flags_args {
  uint32_t flags;
  uint32_t pad;
};
struct kfd_ioctl_dbg_trap_query_debug_event_args {
  uint64_t exception_mask;
  uint32_t gpu_id;
  uint32_t queue_id;
};
struct kfd_ioctl_dbg_trap_query_exception_info_args {
  uint64_t info_ptr;
  uint32_t info_size;
  uint32_t source_id;
  uint32_t exception_code;
  uint32_t clear_exception;
};
struct kfd_ioctl_dbg_trap_queue_snapshot_args {
  uint64_t exception_mask;
  uint64_t snapshot_buf_ptr;
  uint32_t num_queues;
  uint32_t entry_size;
};
struct kfd_ioctl_dbg_trap_device_snapshot_args {
  uint64_t exception_mask;
  uint64_t snapshot_buf_ptr;
  uint32_t num_devices;
  uint32_t entry_size;
};

struct kfd_ioctl_dbg_trap_args {
  uint32_t pid;
  uint32_t op;
  union {
    kfd_ioctl_dbg_trap_enable_args enable;
    kfd_ioctl_dbg_trap_send_runtime_event_args send_runtime_event;
    kfd_ioctl_dbg_trap_set_exceptions_enabled_args set_exceptions_enabled;
    kfd_ioctl_dbg_trap_set_wave_launch_override_args launch_override;
    kfd_ioctl_dbg_trap_set_wave_launch_mode_args launch_mode;
    kfd_ioctl_dbg_trap_suspend_queues_args suspend_queues;
    kfd_ioctl_dbg_trap_resume_queues_args resume_queues;
    kfd_ioctl_dbg_trap_set_node_address_watch_args set_node_address_watch;
    kfd_ioctl_dbg_trap_clear_node_address_watch_args clear_node_address_watch;
    kfd_ioctl_dbg_trap_set_flags_args set_flags;
    kfd_ioctl_dbg_trap_query_debug_event_args query_debug_event;
    kfd_ioctl_dbg_trap_query_exception_info_args query_exception_info;
    kfd_ioctl_dbg_trap_queue_snapshot_args queue_snapshot;
    kfd_ioctl_dbg_trap_device_snapshot_args device_snapshot;
  };
};

struct kfd_queue_snapshot_entry {
  uint64_t exception_status;
  uint64_t ring_base_address;
  uint64_t write_pointer_address;
  uint64_t read_pointer_address;
  uint64_t ctx_save_restore_address;
  uint32_t queue_id;
  uint32_t gpu_id;
  uint32_t ring_size;
  uint32_t queue_type;
  uint32_t ctx_save_restore_area_size;
  uint32_t reserved;
};

struct kfd_dbg_device_info_entry {
  uint64_t exception_status;
  uint64_t lds_base;
  uint64_t lds_limit;
  uint64_t scratch_base;
  uint64_t scratch_limit;
  uint64_t gpuvm_base;
  uint64_t gpuvm_limit;
  uint32_t gpu_id;
  uint32_t location_id;
  uint32_t vendor_id;
  uint32_t device_id;
  uint32_t revision_id;
  uint32_t subsystem_vendor_id;
  uint32_t subsystem_device_id;
  uint32_t fw_version;
  uint32_t gfx_target_version;
  uint32_t simd_count;
  uint32_t max_waves_per_simd;
  uint32_t array_count;
  uint32_t simd_arrays_per_engine;
  uint32_t num_xcc;
  uint32_t capability;
  uint32_t debug_prop;
  uint32_t capability2;  // after 1.16
  uint32_t pad;          // after 1.16
};
// <= 1.16 headers end the entry after debug_prop.
inline constexpr std::size_t KFD_DBG_DEVICE_INFO_ENTRY_SIZE_V116 = 120;

struct kfd_context_save_area_header {
  struct {
    uint32_t control_stack_offset;
    uint32_t control_stack_size;
    uint32_t wave_state_offset;
    uint32_t wave_state_size;
  } wave_state;
  uint32_t debug_offset;
  uint32_t debug_size;
  uint64_t err_payload_addr;
  uint32_t err_event_id;
  uint32_t reserved1;
};

// ---- Request codes ----------------------------------------------------------------------------
inline constexpr uint32_t NR_GET_VERSION = 0x01;
inline constexpr uint32_t NR_CREATE_QUEUE = 0x02;
inline constexpr uint32_t NR_DESTROY_QUEUE = 0x03;
inline constexpr uint32_t NR_UPDATE_QUEUE = 0x07;
inline constexpr uint32_t NR_RUNTIME_ENABLE = 0x25;
inline constexpr uint32_t NR_DBG_TRAP = 0x26;
inline constexpr uint32_t NR_CREATE_PROCESS = 0x27;

inline constexpr uint32_t AMDKFD_IOC_GET_VERSION =
    ioc(IOC_READ, AMDKFD_IOCTL_BASE, NR_GET_VERSION, sizeof(kfd_ioctl_get_version_args));
inline constexpr uint32_t AMDKFD_IOC_CREATE_QUEUE = ioc(
    IOC_READ | IOC_WRITE, AMDKFD_IOCTL_BASE, NR_CREATE_QUEUE, sizeof(kfd_ioctl_create_queue_args));
inline constexpr uint32_t AMDKFD_IOC_CREATE_QUEUE_V116 = ioc(
    IOC_READ | IOC_WRITE, AMDKFD_IOCTL_BASE, NR_CREATE_QUEUE, KFD_CREATE_QUEUE_ARGS_SIZE_V116);
inline constexpr uint32_t AMDKFD_IOC_DESTROY_QUEUE = ioc(
    IOC_READ | IOC_WRITE, AMDKFD_IOCTL_BASE, NR_DESTROY_QUEUE, sizeof(kfd_ioctl_destroy_queue_args));
inline constexpr uint32_t AMDKFD_IOC_UPDATE_QUEUE =
    ioc(IOC_WRITE, AMDKFD_IOCTL_BASE, NR_UPDATE_QUEUE, sizeof(kfd_ioctl_update_queue_args));
inline constexpr uint32_t AMDKFD_IOC_RUNTIME_ENABLE = ioc(
    IOC_READ | IOC_WRITE, AMDKFD_IOCTL_BASE, NR_RUNTIME_ENABLE, sizeof(kfd_ioctl_runtime_enable_args));
inline constexpr uint32_t AMDKFD_IOC_DBG_TRAP =
    ioc(IOC_READ | IOC_WRITE, AMDKFD_IOCTL_BASE, NR_DBG_TRAP, sizeof(kfd_ioctl_dbg_trap_args));
inline constexpr uint32_t AMDKFD_IOC_CREATE_PROCESS =
    ioc(IOC_NONE, AMDKFD_IOCTL_BASE, NR_CREATE_PROCESS, 0);

// ---- Per-process sysfs queue `type` (kernel-internal enum, not the uapi one) ----------------------
inline constexpr uint32_t KFD_QUEUE_TYPE_COMPUTE = 0;
inline constexpr uint32_t KFD_QUEUE_TYPE_SDMA = 1;
inline constexpr uint32_t KFD_QUEUE_TYPE_HIQ = 2;
inline constexpr uint32_t KFD_QUEUE_TYPE_SDMA_XGMI = 3;  // newest kernels (DIQ removed)

static_assert(sizeof(kfd_ioctl_get_version_args) == 8);
static_assert(sizeof(kfd_ioctl_create_queue_args) == 96);
static_assert(offsetof(kfd_ioctl_create_queue_args, sdma_engine_id) == KFD_CREATE_QUEUE_ARGS_SIZE_V116);
static_assert(sizeof(kfd_ioctl_dbg_trap_args) == 32);
static_assert(sizeof(kfd_queue_snapshot_entry) == 64);
static_assert(sizeof(kfd_dbg_device_info_entry) == 128);
static_assert(offsetof(kfd_dbg_device_info_entry, capability2) == KFD_DBG_DEVICE_INFO_ENTRY_SIZE_V116);
static_assert(AMDKFD_IOC_DBG_TRAP == 0xc0204b26u);
static_assert(AMDKFD_IOC_CREATE_QUEUE == 0xc0604b02u);
static_assert(AMDKFD_IOC_CREATE_QUEUE_V116 == 0xc0584b02u);

}  // namespace gpreempt::kfd
