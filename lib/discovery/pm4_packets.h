// PM4 type-3 packets of the KFD hardware scheduler interface on GFX9 (the runlist that debugfs
// `rls` dumps): header encoding, opcodes and the dword layouts of SET_RESOURCES, RUN_LIST,
// MAP_PROCESS, MAP_QUEUES, UNMAP_QUEUES and QUERY_STATUS. Shared by the `rls` decoder and the
// simulated device that renders runlists, so the two cannot drift apart.
//
// Source: the kernel's drivers/gpu/drm/amd/amdkfd/kfd_pm4_headers_ai.h (current mainline, with
// the extended_engine_sel / exec_cleaner_shader fields), kfd_pm4_headers_aldebaran.h (the longer
// MAP_PROCESS used on GFX 9.4.2+), kfd_pm4_opcodes.h, and amdgpu's soc15d.h for the MAP_QUEUES
// queue/pipe/me slot bits that KFD's struct leaves "reserved" (KFD asks the firmware to choose
// the slot, queue_sel = 1, so they are zero in KFD runlists).
//
// Every field is a (dword, shift, width) triple instead of a C bit-field: bit-field layout is
// implementation-defined, and a decoder reading raw dwords wants explicit masks anyway.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gpreempt::discovery::pm4 {

// A field of a packet: `dword` counts from the header (dword 0 = header, 1 = ordinal2, ...).
struct Field {
  std::size_t dword;
  unsigned shift;
  unsigned width;

  constexpr std::uint32_t mask() const {
    return width >= 32 ? 0xffffffffu : ((1u << width) - 1u);
  }
  constexpr std::uint32_t get(std::uint32_t value) const { return (value >> shift) & mask(); }
  constexpr std::uint32_t set(std::uint32_t value, std::uint32_t field) const {
    return (value & ~(mask() << shift)) | ((field & mask()) << shift);
  }
};

// --- Type-3 header (union PM4_MES_TYPE_3_HEADER) -------------------------------------------
namespace header {
inline constexpr Field reserved{0, 0, 8};
inline constexpr Field opcode{0, 8, 8};
inline constexpr Field count{0, 16, 14};  // body dwords - 1, i.e. packet dwords - 2
inline constexpr Field type{0, 30, 2};
}  // namespace header

inline constexpr std::uint32_t kType3 = 3;

// pm_build_pm4_header(): a packet of `packet_dwords` total dwords (header included).
constexpr std::uint32_t make_header(std::uint32_t opcode, std::size_t packet_dwords) {
  std::uint32_t h = 0;
  h = header::opcode.set(h, opcode);
  h = header::count.set(h, static_cast<std::uint32_t>(packet_dwords - 2));
  h = header::type.set(h, kType3);
  return h;
}
// Total dwords of the packet a type-3 header announces (header included).
constexpr std::size_t packet_dwords(std::uint32_t hdr) { return header::count.get(hdr) + 2u; }

// --- Opcodes (kfd_pm4_opcodes.h, enum it_opcode_type) ---------------------------------------
namespace opcode {
inline constexpr std::uint32_t NOP = 0x10;
inline constexpr std::uint32_t WRITE_DATA = 0x37;
inline constexpr std::uint32_t RELEASE_MEM = 0x49;
inline constexpr std::uint32_t SET_RESOURCES = 0xA0;
inline constexpr std::uint32_t MAP_PROCESS = 0xA1;
inline constexpr std::uint32_t MAP_QUEUES = 0xA2;
inline constexpr std::uint32_t UNMAP_QUEUES = 0xA3;
inline constexpr std::uint32_t QUERY_STATUS = 0xA4;
inline constexpr std::uint32_t RUN_LIST = 0xA5;
}  // namespace opcode

// Name as gpreempt prints it ("MAP_QUEUES"); empty for opcodes outside the HWS set above.
constexpr std::string_view opcode_name(std::uint32_t op) {
  switch (op) {
    case opcode::NOP: return "NOP";
    case opcode::WRITE_DATA: return "WRITE_DATA";
    case opcode::RELEASE_MEM: return "RELEASE_MEM";
    case opcode::SET_RESOURCES: return "SET_RESOURCES";
    case opcode::MAP_PROCESS: return "MAP_PROCESS";
    case opcode::MAP_QUEUES: return "MAP_QUEUES";
    case opcode::UNMAP_QUEUES: return "UNMAP_QUEUES";
    case opcode::QUERY_STATUS: return "QUERY_STATUS";
    case opcode::RUN_LIST: return "RUN_LIST";
    default: return {};
  }
}

// --- SET_RESOURCES (struct pm4_mes_set_resources, 8 dwords) ---------------------------------
namespace set_resources {
inline constexpr std::size_t kDwords = 8;
inline constexpr Field vmid_mask{1, 0, 16};
inline constexpr Field unmap_latency{1, 16, 8};
inline constexpr Field queue_type{1, 29, 3};  // 0 KIQ, 1 HIQ, 4 HSA debug interface queue
inline constexpr Field queue_mask_lo{2, 0, 32};
inline constexpr Field queue_mask_hi{3, 0, 32};
inline constexpr Field gws_mask_lo{4, 0, 32};
inline constexpr Field gws_mask_hi{5, 0, 32};
inline constexpr Field oac_mask{6, 0, 16};
inline constexpr Field gds_heap_base{7, 0, 10};
inline constexpr Field gds_heap_size{7, 11, 10};
}  // namespace set_resources

// --- RUN_LIST (struct pm4_mes_runlist, 4 dwords) --------------------------------------------
namespace run_list {
inline constexpr std::size_t kDwords = 4;
inline constexpr Field ib_base_lo{1, 2, 30};  // dword-aligned: address bits 31..2
inline constexpr Field ib_base_hi{2, 0, 32};
inline constexpr Field ib_size{3, 0, 20};     // in dwords
inline constexpr Field chain{3, 20, 1};
inline constexpr Field offload_polling{3, 21, 1};
inline constexpr Field chained_runlist_idle_disable{3, 22, 1};
inline constexpr Field valid{3, 23, 1};
inline constexpr Field process_cnt{3, 24, 4};
}  // namespace run_list

// --- MAP_PROCESS (struct pm4_mes_map_process: 16 dwords on GFX9; the Aldebaran/GFX 9.4.2+
//     variant pm4_mes_map_process_aldebaran: 21 dwords, same prefix up to dword 13) ----------
namespace map_process {
inline constexpr std::size_t kDwords = 16;
inline constexpr std::size_t kDwordsAldebaran = 21;
inline constexpr Field pasid{1, 0, 16};
inline constexpr Field single_memops{1, 16, 1};       // Aldebaran variant only
inline constexpr Field exec_cleaner_shader{1, 17, 1};  // mainline variant only
inline constexpr Field debug_vmid{1, 18, 4};
inline constexpr Field new_debug{1, 22, 1};
inline constexpr Field tmz{1, 23, 1};                  // Aldebaran variant only
inline constexpr Field diq_enable{1, 24, 1};
inline constexpr Field process_quantum{1, 25, 7};
inline constexpr Field page_table_base_lo{2, 0, 32};
inline constexpr Field page_table_base_hi{3, 0, 32};
inline constexpr Field sh_mem_bases{4, 0, 32};
inline constexpr Field sh_mem_config{5, 0, 32};
inline constexpr Field sq_shader_tba_lo{6, 0, 32};
inline constexpr Field sq_shader_tba_hi{7, 0, 32};
inline constexpr Field sq_shader_tma_lo{8, 0, 32};
inline constexpr Field sq_shader_tma_hi{9, 0, 32};
inline constexpr Field gds_addr_lo{11, 0, 32};
inline constexpr Field gds_addr_hi{12, 0, 32};
inline constexpr Field num_gws{13, 0, 7};
inline constexpr Field sdma_enable{13, 7, 1};
inline constexpr Field num_oac{13, 8, 4};
inline constexpr Field gds_size_hi{13, 12, 4};
inline constexpr Field gds_size{13, 16, 6};
inline constexpr Field num_queues{13, 22, 10};
// Dwords after ordinal14 differ: GFX9 has completion_signal lo/hi at 14/15; the Aldebaran
// variant has spi_gdbg_per_vmid_cntl at 14, tcp_watch_cntl[4] at 15..18, completion signal 19/20.
inline constexpr std::size_t completion_signal_lo = 14;
inline constexpr std::size_t completion_signal_lo_aldebaran = 19;
}  // namespace map_process

// --- MAP_QUEUES (struct pm4_mes_map_queues, 7 dwords) ----------------------------------------
namespace map_queues {
inline constexpr std::size_t kDwords = 7;
inline constexpr Field extended_engine_sel{1, 2, 2};  // 0 legacy, 1 sdma0..7, 2 sdma8..15
inline constexpr Field queue_sel{1, 4, 2};            // 0 specified slot, 1 HWS-determined slot
inline constexpr Field vmid{1, 8, 4};                 // soc15d.h; KFD leaves 0
inline constexpr Field gws_control_queue{1, 12, 1};
inline constexpr Field queue{1, 13, 3};               // soc15d.h slot bits, 0 under HWS
inline constexpr Field pipe{1, 16, 2};
inline constexpr Field me{1, 18, 2};
inline constexpr Field queue_type{1, 21, 3};  // 0 normal compute, 1 debug, 2 normal-latency static, 3 low-latency static
inline constexpr Field engine_sel{1, 26, 3};  // 0 compute, 2 sdma0, 3 sdma1 (or engine number with extended sel)
inline constexpr Field num_queues{1, 29, 3};
inline constexpr Field check_disable{2, 1, 1};
inline constexpr Field doorbell_offset{2, 2, 26};  // in dwords from the doorbell BAR
inline constexpr Field mqd_addr_lo{3, 0, 32};
inline constexpr Field mqd_addr_hi{4, 0, 32};
inline constexpr Field wptr_addr_lo{5, 0, 32};
inline constexpr Field wptr_addr_hi{6, 0, 32};

inline constexpr std::uint32_t kQueueSelHwsDetermined = 1;
}  // namespace map_queues

// --- UNMAP_QUEUES (struct pm4_mes_unmap_queues, 6 dwords) ------------------------------------
namespace unmap_queues {
inline constexpr std::size_t kDwords = 6;
inline constexpr Field action{1, 0, 2};  // 0 preempt, 1 reset, 2 disable process queues
inline constexpr Field extended_engine_sel{1, 2, 2};
inline constexpr Field queue_sel{1, 4, 2};  // 0 specified, 1 by PASID, 2 all, 3 all non-static
inline constexpr Field engine_sel{1, 26, 3};
inline constexpr Field num_queues{1, 29, 3};
inline constexpr Field pasid{2, 0, 16};  // when queue_sel == 1
inline constexpr Field doorbell_offset0{2, 2, 26};  // when queue_sel == 0
inline constexpr Field doorbell_offset1{3, 2, 26};
inline constexpr Field doorbell_offset2{4, 2, 26};
inline constexpr Field doorbell_offset3{5, 2, 26};
}  // namespace unmap_queues

// --- QUERY_STATUS (struct pm4_mes_query_status, 7 dwords) ------------------------------------
namespace query_status {
inline constexpr std::size_t kDwords = 7;
inline constexpr Field context_id{1, 0, 28};
inline constexpr Field interrupt_sel{1, 28, 2};
inline constexpr Field command{1, 30, 2};
inline constexpr Field pasid{2, 0, 16};
inline constexpr Field doorbell_offset{2, 2, 26};
inline constexpr Field engine_sel{2, 28, 3};
inline constexpr Field addr_lo{3, 0, 32};
inline constexpr Field addr_hi{4, 0, 32};
inline constexpr Field data_lo{5, 0, 32};
inline constexpr Field data_hi{6, 0, 32};
}  // namespace query_status

static_assert(packet_dwords(make_header(opcode::MAP_QUEUES, map_queues::kDwords)) == 7);
static_assert(header::opcode.get(make_header(opcode::MAP_PROCESS, 16)) == 0xA1);
static_assert(make_header(opcode::RUN_LIST, run_list::kDwords) == 0xC002A500u);

}  // namespace gpreempt::discovery::pm4
