// Every size, offset, constant and request code of include/gpreempt/kfd_abi.h, checked against
// ../shared/kfd/kfd-abi.tsv (compiled from the real KFD 1.22 and 1.16 headers; FACTS §1, §17).
#include <cstddef>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fixtures.h"
#include "gpreempt/kfd_abi.h"

namespace {

using namespace gpreempt::kfd;

struct Row {
  std::string kind;
  std::string name;
  unsigned long long value;  // size for struct/field, value for const/ioctl
  long long offset;          // -1 where the TSV says '-'
};

// name -> row, from the TSV. Malformed rows fail the test with their line number.
std::map<std::string, Row> load_tsv(const std::string& text) {
  std::map<std::string, Row> rows;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (lineno == 1 || line.empty()) continue;  // header
    std::vector<std::string> cols;
    std::istringstream ls(line);
    for (std::string c; std::getline(ls, c, '\t');) cols.push_back(c);
    if (cols.size() != 4) {
      ADD_FAILURE() << "kfd-abi.tsv:" << lineno << ": expected 4 tab-separated columns, got "
                    << cols.size();
      continue;
    }
    Row r{cols[0], cols[1], std::stoull(cols[2], nullptr, 0),
          cols[3] == "-" ? -1 : std::stoll(cols[3], nullptr, 0)};
    rows[r.name] = r;
  }
  return rows;
}

#define MEMBER_SIZE(T, m) sizeof(((T*)nullptr)->m)
#define S(T) Row{"struct", #T, sizeof(T), -1}
#define F(T, m) Row{"field", #T "." #m, MEMBER_SIZE(T, m), (long long)offsetof(T, m)}
#define C(name) Row{"const", #name, (unsigned long long)(name), -1}
#define I(name) Row{"ioctl", #name, (unsigned long long)(name), -1}

std::vector<Row> ours() {
  return {
      C(KFD_IOCTL_MAJOR_VERSION), C(KFD_IOCTL_MINOR_VERSION),
      S(kfd_ioctl_get_version_args), F(kfd_ioctl_get_version_args, major_version),
      F(kfd_ioctl_get_version_args, minor_version),
      C(KFD_IOC_QUEUE_TYPE_COMPUTE), C(KFD_IOC_QUEUE_TYPE_SDMA), C(KFD_IOC_QUEUE_TYPE_COMPUTE_AQL),
      C(KFD_IOC_QUEUE_TYPE_SDMA_XGMI), C(KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID),
      C(KFD_MAX_QUEUE_PERCENTAGE), C(KFD_MAX_QUEUE_PRIORITY), C(KFD_MIN_QUEUE_RING_SIZE),
      S(kfd_ioctl_create_queue_args),
      F(kfd_ioctl_create_queue_args, ring_base_address),
      F(kfd_ioctl_create_queue_args, write_pointer_address),
      F(kfd_ioctl_create_queue_args, read_pointer_address),
      F(kfd_ioctl_create_queue_args, doorbell_offset),
      F(kfd_ioctl_create_queue_args, ring_size), F(kfd_ioctl_create_queue_args, gpu_id),
      F(kfd_ioctl_create_queue_args, queue_type), F(kfd_ioctl_create_queue_args, queue_percentage),
      F(kfd_ioctl_create_queue_args, queue_priority), F(kfd_ioctl_create_queue_args, queue_id),
      F(kfd_ioctl_create_queue_args, eop_buffer_address),
      F(kfd_ioctl_create_queue_args, eop_buffer_size),
      F(kfd_ioctl_create_queue_args, ctx_save_restore_address),
      F(kfd_ioctl_create_queue_args, ctx_save_restore_size),
      F(kfd_ioctl_create_queue_args, ctl_stack_size),
      F(kfd_ioctl_create_queue_args, sdma_engine_id),
      F(kfd_ioctl_create_queue_args, metadata_ring_size),
      S(kfd_ioctl_destroy_queue_args), F(kfd_ioctl_destroy_queue_args, queue_id),
      F(kfd_ioctl_destroy_queue_args, pad),
      S(kfd_ioctl_update_queue_args), F(kfd_ioctl_update_queue_args, ring_base_address),
      F(kfd_ioctl_update_queue_args, queue_id), F(kfd_ioctl_update_queue_args, ring_size),
      F(kfd_ioctl_update_queue_args, queue_percentage),
      F(kfd_ioctl_update_queue_args, queue_priority),
      S(kfd_ioctl_runtime_enable_args), F(kfd_ioctl_runtime_enable_args, r_debug),
      F(kfd_ioctl_runtime_enable_args, mode_mask),
      F(kfd_ioctl_runtime_enable_args, capabilities_mask),
      C(KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK), C(KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK),
      S(kfd_runtime_info), F(kfd_runtime_info, r_debug), F(kfd_runtime_info, runtime_state),
      F(kfd_runtime_info, ttmp_setup),
      C(DEBUG_RUNTIME_STATE_DISABLED), C(DEBUG_RUNTIME_STATE_ENABLED),
      C(DEBUG_RUNTIME_STATE_ENABLED_BUSY), C(DEBUG_RUNTIME_STATE_ENABLED_ERROR),
      S(kfd_ioctl_dbg_trap_args), F(kfd_ioctl_dbg_trap_args, pid), F(kfd_ioctl_dbg_trap_args, op),
      F(kfd_ioctl_dbg_trap_args, enable), F(kfd_ioctl_dbg_trap_args, send_runtime_event),
      F(kfd_ioctl_dbg_trap_args, set_exceptions_enabled),
      F(kfd_ioctl_dbg_trap_args, launch_override), F(kfd_ioctl_dbg_trap_args, launch_mode),
      F(kfd_ioctl_dbg_trap_args, suspend_queues), F(kfd_ioctl_dbg_trap_args, resume_queues),
      F(kfd_ioctl_dbg_trap_args, set_node_address_watch),
      F(kfd_ioctl_dbg_trap_args, clear_node_address_watch),
      F(kfd_ioctl_dbg_trap_args, set_flags), F(kfd_ioctl_dbg_trap_args, query_debug_event),
      F(kfd_ioctl_dbg_trap_args, query_exception_info),
      F(kfd_ioctl_dbg_trap_args, queue_snapshot), F(kfd_ioctl_dbg_trap_args, device_snapshot),
      S(kfd_ioctl_dbg_trap_enable_args), F(kfd_ioctl_dbg_trap_enable_args, exception_mask),
      F(kfd_ioctl_dbg_trap_enable_args, rinfo_ptr), F(kfd_ioctl_dbg_trap_enable_args, rinfo_size),
      F(kfd_ioctl_dbg_trap_enable_args, dbg_fd),
      S(kfd_ioctl_dbg_trap_send_runtime_event_args),
      F(kfd_ioctl_dbg_trap_send_runtime_event_args, exception_mask),
      F(kfd_ioctl_dbg_trap_send_runtime_event_args, gpu_id),
      F(kfd_ioctl_dbg_trap_send_runtime_event_args, queue_id),
      S(kfd_ioctl_dbg_trap_set_exceptions_enabled_args),
      F(kfd_ioctl_dbg_trap_set_exceptions_enabled_args, exception_mask),
      S(kfd_ioctl_dbg_trap_set_wave_launch_override_args),
      F(kfd_ioctl_dbg_trap_set_wave_launch_override_args, override_mode),
      F(kfd_ioctl_dbg_trap_set_wave_launch_override_args, enable_mask),
      F(kfd_ioctl_dbg_trap_set_wave_launch_override_args, support_request_mask),
      F(kfd_ioctl_dbg_trap_set_wave_launch_override_args, pad),
      S(kfd_ioctl_dbg_trap_set_wave_launch_mode_args),
      F(kfd_ioctl_dbg_trap_set_wave_launch_mode_args, launch_mode),
      F(kfd_ioctl_dbg_trap_set_wave_launch_mode_args, pad),
      S(kfd_ioctl_dbg_trap_suspend_queues_args),
      F(kfd_ioctl_dbg_trap_suspend_queues_args, exception_mask),
      F(kfd_ioctl_dbg_trap_suspend_queues_args, queue_array_ptr),
      F(kfd_ioctl_dbg_trap_suspend_queues_args, num_queues),
      F(kfd_ioctl_dbg_trap_suspend_queues_args, grace_period),
      S(kfd_ioctl_dbg_trap_resume_queues_args),
      F(kfd_ioctl_dbg_trap_resume_queues_args, queue_array_ptr),
      F(kfd_ioctl_dbg_trap_resume_queues_args, num_queues),
      F(kfd_ioctl_dbg_trap_resume_queues_args, pad),
      S(kfd_ioctl_dbg_trap_set_node_address_watch_args),
      F(kfd_ioctl_dbg_trap_set_node_address_watch_args, address),
      F(kfd_ioctl_dbg_trap_set_node_address_watch_args, mode),
      F(kfd_ioctl_dbg_trap_set_node_address_watch_args, mask),
      F(kfd_ioctl_dbg_trap_set_node_address_watch_args, gpu_id),
      F(kfd_ioctl_dbg_trap_set_node_address_watch_args, id),
      S(kfd_ioctl_dbg_trap_clear_node_address_watch_args),
      F(kfd_ioctl_dbg_trap_clear_node_address_watch_args, gpu_id),
      F(kfd_ioctl_dbg_trap_clear_node_address_watch_args, id),
      S(kfd_ioctl_dbg_trap_set_flags_args), F(kfd_ioctl_dbg_trap_set_flags_args, flags),
      F(kfd_ioctl_dbg_trap_set_flags_args, pad),
      S(kfd_ioctl_dbg_trap_query_debug_event_args),
      F(kfd_ioctl_dbg_trap_query_debug_event_args, exception_mask),
      F(kfd_ioctl_dbg_trap_query_debug_event_args, gpu_id),
      F(kfd_ioctl_dbg_trap_query_debug_event_args, queue_id),
      S(kfd_ioctl_dbg_trap_query_exception_info_args),
      F(kfd_ioctl_dbg_trap_query_exception_info_args, info_ptr),
      F(kfd_ioctl_dbg_trap_query_exception_info_args, info_size),
      F(kfd_ioctl_dbg_trap_query_exception_info_args, source_id),
      F(kfd_ioctl_dbg_trap_query_exception_info_args, exception_code),
      F(kfd_ioctl_dbg_trap_query_exception_info_args, clear_exception),
      S(kfd_ioctl_dbg_trap_queue_snapshot_args),
      F(kfd_ioctl_dbg_trap_queue_snapshot_args, exception_mask),
      F(kfd_ioctl_dbg_trap_queue_snapshot_args, snapshot_buf_ptr),
      F(kfd_ioctl_dbg_trap_queue_snapshot_args, num_queues),
      F(kfd_ioctl_dbg_trap_queue_snapshot_args, entry_size),
      S(kfd_ioctl_dbg_trap_device_snapshot_args),
      F(kfd_ioctl_dbg_trap_device_snapshot_args, exception_mask),
      F(kfd_ioctl_dbg_trap_device_snapshot_args, snapshot_buf_ptr),
      F(kfd_ioctl_dbg_trap_device_snapshot_args, num_devices),
      F(kfd_ioctl_dbg_trap_device_snapshot_args, entry_size),
      F(kfd_ioctl_dbg_trap_args, enable.exception_mask),
      F(kfd_ioctl_dbg_trap_args, enable.rinfo_ptr), F(kfd_ioctl_dbg_trap_args, enable.rinfo_size),
      F(kfd_ioctl_dbg_trap_args, enable.dbg_fd),
      F(kfd_ioctl_dbg_trap_args, send_runtime_event.exception_mask),
      F(kfd_ioctl_dbg_trap_args, send_runtime_event.gpu_id),
      F(kfd_ioctl_dbg_trap_args, send_runtime_event.queue_id),
      F(kfd_ioctl_dbg_trap_args, set_exceptions_enabled.exception_mask),
      F(kfd_ioctl_dbg_trap_args, launch_override.override_mode),
      F(kfd_ioctl_dbg_trap_args, launch_override.enable_mask),
      F(kfd_ioctl_dbg_trap_args, launch_override.support_request_mask),
      F(kfd_ioctl_dbg_trap_args, launch_mode.launch_mode),
      F(kfd_ioctl_dbg_trap_args, suspend_queues.exception_mask),
      F(kfd_ioctl_dbg_trap_args, suspend_queues.queue_array_ptr),
      F(kfd_ioctl_dbg_trap_args, suspend_queues.num_queues),
      F(kfd_ioctl_dbg_trap_args, suspend_queues.grace_period),
      F(kfd_ioctl_dbg_trap_args, resume_queues.queue_array_ptr),
      F(kfd_ioctl_dbg_trap_args, resume_queues.num_queues),
      F(kfd_ioctl_dbg_trap_args, set_node_address_watch.address),
      F(kfd_ioctl_dbg_trap_args, set_node_address_watch.mode),
      F(kfd_ioctl_dbg_trap_args, set_node_address_watch.mask),
      F(kfd_ioctl_dbg_trap_args, set_node_address_watch.gpu_id),
      F(kfd_ioctl_dbg_trap_args, set_node_address_watch.id),
      F(kfd_ioctl_dbg_trap_args, clear_node_address_watch.gpu_id),
      F(kfd_ioctl_dbg_trap_args, clear_node_address_watch.id),
      F(kfd_ioctl_dbg_trap_args, set_flags.flags),
      F(kfd_ioctl_dbg_trap_args, query_debug_event.exception_mask),
      F(kfd_ioctl_dbg_trap_args, query_debug_event.gpu_id),
      F(kfd_ioctl_dbg_trap_args, query_debug_event.queue_id),
      F(kfd_ioctl_dbg_trap_args, query_exception_info.info_ptr),
      F(kfd_ioctl_dbg_trap_args, query_exception_info.info_size),
      F(kfd_ioctl_dbg_trap_args, query_exception_info.source_id),
      F(kfd_ioctl_dbg_trap_args, query_exception_info.exception_code),
      F(kfd_ioctl_dbg_trap_args, query_exception_info.clear_exception),
      F(kfd_ioctl_dbg_trap_args, queue_snapshot.exception_mask),
      F(kfd_ioctl_dbg_trap_args, queue_snapshot.snapshot_buf_ptr),
      F(kfd_ioctl_dbg_trap_args, queue_snapshot.num_queues),
      F(kfd_ioctl_dbg_trap_args, queue_snapshot.entry_size),
      F(kfd_ioctl_dbg_trap_args, device_snapshot.exception_mask),
      F(kfd_ioctl_dbg_trap_args, device_snapshot.snapshot_buf_ptr),
      F(kfd_ioctl_dbg_trap_args, device_snapshot.num_devices),
      F(kfd_ioctl_dbg_trap_args, device_snapshot.entry_size),
      S(kfd_queue_snapshot_entry), F(kfd_queue_snapshot_entry, exception_status),
      F(kfd_queue_snapshot_entry, ring_base_address),
      F(kfd_queue_snapshot_entry, write_pointer_address),
      F(kfd_queue_snapshot_entry, read_pointer_address),
      F(kfd_queue_snapshot_entry, ctx_save_restore_address),
      F(kfd_queue_snapshot_entry, queue_id), F(kfd_queue_snapshot_entry, gpu_id),
      F(kfd_queue_snapshot_entry, ring_size), F(kfd_queue_snapshot_entry, queue_type),
      F(kfd_queue_snapshot_entry, ctx_save_restore_area_size),
      F(kfd_queue_snapshot_entry, reserved),
      S(kfd_dbg_device_info_entry), F(kfd_dbg_device_info_entry, exception_status),
      F(kfd_dbg_device_info_entry, lds_base), F(kfd_dbg_device_info_entry, lds_limit),
      F(kfd_dbg_device_info_entry, scratch_base), F(kfd_dbg_device_info_entry, scratch_limit),
      F(kfd_dbg_device_info_entry, gpuvm_base), F(kfd_dbg_device_info_entry, gpuvm_limit),
      F(kfd_dbg_device_info_entry, gpu_id), F(kfd_dbg_device_info_entry, location_id),
      F(kfd_dbg_device_info_entry, vendor_id), F(kfd_dbg_device_info_entry, device_id),
      F(kfd_dbg_device_info_entry, revision_id),
      F(kfd_dbg_device_info_entry, subsystem_vendor_id),
      F(kfd_dbg_device_info_entry, subsystem_device_id),
      F(kfd_dbg_device_info_entry, fw_version), F(kfd_dbg_device_info_entry, gfx_target_version),
      F(kfd_dbg_device_info_entry, simd_count), F(kfd_dbg_device_info_entry, max_waves_per_simd),
      F(kfd_dbg_device_info_entry, array_count),
      F(kfd_dbg_device_info_entry, simd_arrays_per_engine), F(kfd_dbg_device_info_entry, num_xcc),
      F(kfd_dbg_device_info_entry, capability), F(kfd_dbg_device_info_entry, debug_prop),
      F(kfd_dbg_device_info_entry, capability2), F(kfd_dbg_device_info_entry, pad),
      S(kfd_context_save_area_header), F(kfd_context_save_area_header, wave_state),
      F(kfd_context_save_area_header, wave_state.control_stack_offset),
      F(kfd_context_save_area_header, wave_state.control_stack_size),
      F(kfd_context_save_area_header, wave_state.wave_state_offset),
      F(kfd_context_save_area_header, wave_state.wave_state_size),
      F(kfd_context_save_area_header, debug_offset), F(kfd_context_save_area_header, debug_size),
      F(kfd_context_save_area_header, err_payload_addr),
      F(kfd_context_save_area_header, err_event_id), F(kfd_context_save_area_header, reserved1),
      C(KFD_IOC_DBG_TRAP_ENABLE), C(KFD_IOC_DBG_TRAP_DISABLE),
      C(KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT), C(KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED),
      C(KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE), C(KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE),
      C(KFD_IOC_DBG_TRAP_SUSPEND_QUEUES), C(KFD_IOC_DBG_TRAP_RESUME_QUEUES),
      C(KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH), C(KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH),
      C(KFD_IOC_DBG_TRAP_SET_FLAGS), C(KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT),
      C(KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO), C(KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT),
      C(KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT),
      C(KFD_DBG_QUEUE_ERROR_BIT), C(KFD_DBG_QUEUE_INVALID_BIT), C(KFD_DBG_QUEUE_ERROR_MASK),
      C(KFD_DBG_QUEUE_INVALID_MASK), C(KFD_INVALID_FD),
      C(EC_NONE), C(EC_QUEUE_WAVE_ABORT), C(EC_QUEUE_WAVE_TRAP), C(EC_QUEUE_WAVE_MATH_ERROR),
      C(EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION), C(EC_QUEUE_WAVE_MEMORY_VIOLATION),
      C(EC_QUEUE_WAVE_APERTURE_VIOLATION), C(EC_QUEUE_PACKET_DISPATCH_DIM_INVALID),
      C(EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID),
      C(EC_QUEUE_PACKET_DISPATCH_CODE_INVALID), C(EC_QUEUE_PACKET_RESERVED),
      C(EC_QUEUE_PACKET_UNSUPPORTED), C(EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID),
      C(EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID), C(EC_QUEUE_PACKET_VENDOR_UNSUPPORTED),
      C(EC_QUEUE_PREEMPTION_ERROR), C(EC_QUEUE_NEW), C(EC_DEVICE_QUEUE_DELETE),
      C(EC_DEVICE_MEMORY_VIOLATION), C(EC_DEVICE_RAS_ERROR), C(EC_DEVICE_FATAL_HALT),
      C(EC_DEVICE_NEW), C(EC_PROCESS_RUNTIME), C(EC_PROCESS_DEVICE_REMOVE), C(EC_MAX),
      Row{"const", "KFD_EC_MASK(EC_QUEUE_WAVE_ABORT)", KFD_EC_MASK(EC_QUEUE_WAVE_ABORT), -1},
      Row{"const", "KFD_EC_MASK(EC_QUEUE_WAVE_TRAP)", KFD_EC_MASK(EC_QUEUE_WAVE_TRAP), -1},
      Row{"const", "KFD_EC_MASK(EC_QUEUE_WAVE_MEMORY_VIOLATION)",
          KFD_EC_MASK(EC_QUEUE_WAVE_MEMORY_VIOLATION), -1},
      Row{"const", "KFD_EC_MASK(EC_QUEUE_PREEMPTION_ERROR)",
          KFD_EC_MASK(EC_QUEUE_PREEMPTION_ERROR), -1},
      Row{"const", "KFD_EC_MASK(EC_QUEUE_NEW)", KFD_EC_MASK(EC_QUEUE_NEW), -1},
      Row{"const", "KFD_EC_MASK(EC_DEVICE_QUEUE_DELETE)", KFD_EC_MASK(EC_DEVICE_QUEUE_DELETE), -1},
      Row{"const", "KFD_EC_MASK(EC_DEVICE_MEMORY_VIOLATION)",
          KFD_EC_MASK(EC_DEVICE_MEMORY_VIOLATION), -1},
      Row{"const", "KFD_EC_MASK(EC_DEVICE_RAS_ERROR)", KFD_EC_MASK(EC_DEVICE_RAS_ERROR), -1},
      Row{"const", "KFD_EC_MASK(EC_DEVICE_FATAL_HALT)", KFD_EC_MASK(EC_DEVICE_FATAL_HALT), -1},
      Row{"const", "KFD_EC_MASK(EC_DEVICE_NEW)", KFD_EC_MASK(EC_DEVICE_NEW), -1},
      Row{"const", "KFD_EC_MASK(EC_PROCESS_RUNTIME)", KFD_EC_MASK(EC_PROCESS_RUNTIME), -1},
      Row{"const", "KFD_EC_MASK(EC_PROCESS_DEVICE_REMOVE)",
          KFD_EC_MASK(EC_PROCESS_DEVICE_REMOVE), -1},
      C(KFD_EC_MASK_QUEUE), C(KFD_EC_MASK_DEVICE), C(KFD_EC_MASK_PROCESS), C(KFD_EC_MASK_PACKET),
      C(KFD_DBG_TRAP_OVERRIDE_OR), C(KFD_DBG_TRAP_OVERRIDE_REPLACE),
      C(KFD_DBG_TRAP_MASK_FP_INVALID), C(KFD_DBG_TRAP_MASK_FP_INPUT_DENORMAL),
      C(KFD_DBG_TRAP_MASK_FP_DIVIDE_BY_ZERO), C(KFD_DBG_TRAP_MASK_FP_OVERFLOW),
      C(KFD_DBG_TRAP_MASK_FP_UNDERFLOW), C(KFD_DBG_TRAP_MASK_FP_INEXACT),
      C(KFD_DBG_TRAP_MASK_INT_DIVIDE_BY_ZERO), C(KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH),
      C(KFD_DBG_TRAP_MASK_DBG_MEMORY_VIOLATION), C(KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START),
      C(KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_END),
      C(KFD_DBG_TRAP_WAVE_LAUNCH_MODE_NORMAL), C(KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT),
      C(KFD_DBG_TRAP_WAVE_LAUNCH_MODE_DEBUG),
      C(KFD_DBG_TRAP_ADDRESS_WATCH_MODE_READ), C(KFD_DBG_TRAP_ADDRESS_WATCH_MODE_NONREAD),
      C(KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ATOMIC), C(KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ALL),
      C(KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP), C(KFD_DBG_TRAP_FLAG_SINGLE_ALU_OP),
      C(KFD_DBG_TRAP_FLAG_LDS_OUT_OF_ADDR_RANGE),
      C(AMDKFD_IOCTL_BASE), C(AMDKFD_COMMAND_START), C(AMDKFD_COMMAND_END),
      I(AMDKFD_IOC_GET_VERSION), I(AMDKFD_IOC_CREATE_QUEUE), I(AMDKFD_IOC_DESTROY_QUEUE),
      I(AMDKFD_IOC_UPDATE_QUEUE), I(AMDKFD_IOC_RUNTIME_ENABLE), I(AMDKFD_IOC_DBG_TRAP),
      I(AMDKFD_IOC_CREATE_PROCESS),
      Row{"const", "_IOC_NR(AMDKFD_IOC_DBG_TRAP)", ioc_nr(AMDKFD_IOC_DBG_TRAP), -1},
      Row{"const", "_IOC_SIZE(AMDKFD_IOC_DBG_TRAP)", ioc_size(AMDKFD_IOC_DBG_TRAP), -1},
      Row{"const", "_IOC_DIR(AMDKFD_IOC_DBG_TRAP)", ioc_dir(AMDKFD_IOC_DBG_TRAP), -1},
      Row{"const", "_IOC_NR(AMDKFD_IOC_RUNTIME_ENABLE)", ioc_nr(AMDKFD_IOC_RUNTIME_ENABLE), -1},
      Row{"const", "_IOC_SIZE(AMDKFD_IOC_CREATE_QUEUE)", ioc_size(AMDKFD_IOC_CREATE_QUEUE), -1},
      Row{"const", "_IOC_NONE", IOC_NONE, -1}, Row{"const", "_IOC_WRITE", IOC_WRITE, -1},
      Row{"const", "_IOC_READ", IOC_READ, -1},
      // The layouts that differ when a caller was compiled against a 1.16 header.
      Row{"struct", "kfd_ioctl_create_queue_args@kfd_ioctl_1.16", KFD_CREATE_QUEUE_ARGS_SIZE_V116, -1},
      Row{"struct", "kfd_dbg_device_info_entry@kfd_ioctl_1.16", KFD_DBG_DEVICE_INFO_ENTRY_SIZE_V116,
          -1},
      Row{"const", "AMDKFD_COMMAND_END@kfd_ioctl_1.16", AMDKFD_COMMAND_END_V116, -1},
      Row{"ioctl", "AMDKFD_IOC_CREATE_QUEUE@kfd_ioctl_1.16", AMDKFD_IOC_CREATE_QUEUE_V116, -1},
      Row{"const", "_IOC_SIZE(AMDKFD_IOC_CREATE_QUEUE)@kfd_ioctl_1.16",
          ioc_size(AMDKFD_IOC_CREATE_QUEUE_V116), -1},
  };
}

class KfdAbiTsv : public ::testing::Test {
 protected:
  void SetUp() override {
    GPREEMPT_REQUIRE_SHARED();
    tsv_ = load_tsv(gpreempt::testing::read_file(gpreempt::testing::shared_dir() / "kfd" /
                                                 "kfd-abi.tsv"));
  }
  std::map<std::string, Row> tsv_;
};

TEST_F(KfdAbiTsv, EveryDefinitionMatchesTheCompiledKernelHeader) {
  int checked = 0;
  for (const Row& r : ours()) {
    auto it = tsv_.find(r.name);
    ASSERT_NE(it, tsv_.end()) << r.name << " is defined by kfd_abi.h but absent from kfd-abi.tsv";
    EXPECT_EQ(it->second.kind, r.kind) << r.name;
    EXPECT_EQ(it->second.value, r.value) << r.name << ": kfd-abi.tsv says " << it->second.value
                                         << ", kfd_abi.h has " << r.value;
    EXPECT_EQ(it->second.offset, r.offset) << r.name << " offset";
    ++checked;
  }
  EXPECT_GT(checked, 250);
}

// The TSV rows for the whole 1.22 debugger API must all be covered: a row we do not define is a
// part of the ABI we would be guessing at.
TEST_F(KfdAbiTsv, EveryDebuggerApiRowIsDefined) {
  std::map<std::string, bool> defined;
  for (const Row& r : ours()) defined[r.name] = true;
  for (const auto& [name, row] : tsv_) {
    bool debugger_api = name.rfind("kfd_ioctl_dbg_trap", 0) == 0 ||
                        name.rfind("kfd_queue_snapshot_entry", 0) == 0 ||
                        name.rfind("kfd_dbg_device_info_entry", 0) == 0 ||
                        name.rfind("kfd_runtime_info", 0) == 0 || name.rfind("EC_", 0) == 0 ||
                        name.rfind("KFD_IOC_DBG_TRAP_", 0) == 0 ||
                        name.rfind("kfd_ioctl_create_queue_args", 0) == 0;
    if (debugger_api) {
      EXPECT_TRUE(defined.count(name)) << name << " (" << row.kind << ") undefined";
    }
  }
}

TEST(KfdAbi, RequestDecodingHelpers) {
  EXPECT_EQ(ioc_nr(AMDKFD_IOC_CREATE_QUEUE_V116), ioc_nr(AMDKFD_IOC_CREATE_QUEUE));
  EXPECT_EQ(ioc_size(AMDKFD_IOC_CREATE_QUEUE_V116), 88u);
  EXPECT_EQ(ioc_type(AMDKFD_IOC_DBG_TRAP), AMDKFD_IOCTL_BASE);
  EXPECT_EQ(ioc_dir(AMDKFD_IOC_GET_VERSION), IOC_READ);
}

}  // namespace
