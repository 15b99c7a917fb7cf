// Every field the GFX9 queue-descriptor decoders read, over its whole input range: each register
// of the HQD window (and of the SDMA MQD) is set to every 16-bit value, every single bit, all ones
// and pseudo-random words, and the decoded value is compared with the field layout of the
// register table (gc_9_4_3_sh_mask.h / sdma_4_4_2), written out here as hex masks independently of
// gfx9_mqd_layout.h. This file is also built under UBSan (test_discovery_fields_ubsan): a shift by
// the field's width, or past 63, is undefined behaviour a plain build does not see.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "discovery/mqd_fields.h"

using namespace gpreempt::discovery;

namespace {

using Window = std::array<std::uint32_t, 56>;

// Values each register is tried with: 0..0xffff, every single bit, all ones and random words.
std::vector<std::uint32_t> probe_values() {
  std::vector<std::uint32_t> v;
  for (std::uint32_t i = 0; i <= 0xffff; ++i) v.push_back(i);
  for (unsigned b = 0; b < 32; ++b) v.push_back(1u << b);
  v.push_back(0xffffffffu);
  v.push_back(0xfffffffeu);
  std::mt19937 rng(0x9f3);
  for (int i = 0; i < 4096; ++i) v.push_back(static_cast<std::uint32_t>(rng()));
  return v;
}

std::uint64_t u64(std::uint32_t hi, std::uint32_t lo) { return (std::uint64_t{hi} << 32) | lo; }

// One decoded field: the register(s) it reads (window index; the partner register of a lo/hi
// pair is tried with all ones and with a pattern) and its value by the register table.
struct FieldCase {
  const char* name;
  std::size_t reg;
  std::size_t partner;  // == reg when the field reads one register
  bool partner_is_hi;
  std::function<std::uint64_t(const QueueDescriptor&)> decoded;
  std::function<std::uint64_t(std::uint32_t reg, std::uint32_t partner)> expected;
};

const std::vector<FieldCase>& hqd_cases() {
  static const std::vector<FieldCase> cases = {
      {"mqd_base lo (CP_MQD_BASE_ADDR 31:2)", 0, 1, true, [](auto& d) { return d.mqd_base; },
       [](std::uint32_t lo, std::uint32_t hi) { return u64(hi & 0xffffu, lo & 0xfffffffcu); }},
      {"mqd_base hi (CP_MQD_BASE_ADDR_HI 15:0)", 1, 0, false, [](auto& d) { return d.mqd_base; },
       [](std::uint32_t hi, std::uint32_t lo) { return u64(hi & 0xffffu, lo & 0xfffffffcu); }},
      {"active (CP_HQD_ACTIVE 0)", 2, 2, false, [](auto& d) { return std::uint64_t{d.active}; },
       [](std::uint32_t v, std::uint32_t) { return std::uint64_t{v & 1u}; }},
      {"vmid (CP_HQD_VMID 3:0)", 3, 3, false, [](auto& d) { return std::uint64_t{d.vmid}; },
       [](std::uint32_t v, std::uint32_t) { return std::uint64_t{v & 0xfu}; }},
      {"persistent_state (raw register)", 4, 4, false, [](auto& d) { return std::uint64_t{d.persistent_state}; },
       [](std::uint32_t v, std::uint32_t) { return std::uint64_t{v}; }},
      {"pipe_priority (CP_HQD_PIPE_PRIORITY 1:0)", 5, 5, false,
       [](auto& d) { return std::uint64_t{d.pipe_priority}; },
       [](std::uint32_t v, std::uint32_t) { return std::uint64_t{v & 0x3u}; }},
      {"queue_priority (CP_HQD_QUEUE_PRIORITY 3:0)", 6, 6, false,
       [](auto& d) { return std::uint64_t{d.queue_priority}; },
       [](std::uint32_t v, std::uint32_t) { return std::uint64_t{v & 0xfu}; }},
      {"quantum (raw register)", 7, 7, false, [](auto& d) { return std::uint64_t{d.quantum}; },
       [](std::uint32_t v, std::uint32_t) { return std::uint64_t{v}; }},
      {"ring_base lo (CP_HQD_PQ_BASE 31:0, << 8)", 8, 9, true, [](auto& d) { return d.ring_base; },
       [](std::uint32_t lo, std::uint32_t hi) { return u64(hi & 0xffu, lo) << 8; }},
      {"ring_base hi (CP_HQD_PQ_BASE_HI 7:0)", 9, 8, false, [](auto& d) { return d.ring_base; },
       [](std::uint32_t hi, std::uint32_t lo) { return u64(hi & 0xffu, lo) << 8; }},
      {"rptr (CP_HQD_PQ_RPTR 31:0)", 10, 10, false, [](auto& d) { return std::uint64_t{d.rptr}; },
       [](std::uint32_t v, std::uint32_t) { return std::uint64_t{v}; }},
      {"rptr_report_address lo (31:2)", 11, 12, true, [](auto& d) { return d.rptr_report_address; },
       [](std::uint32_t lo, std::uint32_t hi) { return u64(hi & 0xffffu, lo & 0xfffffffcu); }},
      {"rptr_report_address hi (15:0)", 12, 11, false, [](auto& d) { return d.rptr_report_address; },
       [](std::uint32_t hi, std::uint32_t lo) { return u64(hi & 0xffffu, lo & 0xfffffffcu); }},
      {"wptr_poll_address lo (31:3)", 13, 14, true, [](auto& d) { return d.wptr_poll_address; },
       [](std::uint32_t lo, std::uint32_t hi) { return u64(hi & 0xffffu, lo & 0xfffffff8u); }},
      {"wptr_poll_address hi (15:0)", 14, 13, false, [](auto& d) { return d.wptr_poll_address; },
       [](std::uint32_t hi, std::uint32_t lo) { return u64(hi & 0xffffu, lo & 0xfffffff8u); }},
      {"doorbell_control (raw register)", 15, 15, false, [](auto& d) { return std::uint64_t{d.doorbell_control}; },
       [](std::uint32_t v, std::uint32_t) { return std::uint64_t{v}; }},
      {"doorbell_offset (DOORBELL_CONTROL 27:2)", 15, 15, false,
       [](auto& d) { return std::uint64_t{d.doorbell_offset}; },
       [](std::uint32_t v, std::uint32_t) { return std::uint64_t{(v & 0x0ffffffcu) >> 2}; }},
      {"doorbell_enabled (DOORBELL_CONTROL 30)", 15, 15, false,
       [](auto& d) { return std::uint64_t{d.doorbell_enabled}; },
       [](std::uint32_t v, std::uint32_t) { return std::uint64_t{(v >> 30) & 1u}; }},
      {"pq_control (raw register)", 17, 17, false, [](auto& d) { return std::uint64_t{d.pq_control}; },
       [](std::uint32_t v, std::uint32_t) { return std::uint64_t{v}; }},
      {"ring_size (PQ_CONTROL.QUEUE_SIZE 5:0: 2^(QUEUE_SIZE+1) dwords)", 17, 17, false,
       [](auto& d) { return d.ring_size; },
       [](std::uint32_t v, std::uint32_t) {
         const unsigned qs = v & 0x3fu;
         std::uint64_t bytes = 4;  // one dword, doubled QUEUE_SIZE+1 times
         for (unsigned i = 0; i <= qs; ++i) bytes = bytes > (~std::uint64_t{0} >> 1) ? 0 : bytes * 2;
         return bytes;
       }},
      {"eop_base lo (CP_HQD_EOP_BASE_ADDR 31:0, << 8)", 37, 38, true, [](auto& d) { return d.eop_base; },
       [](std::uint32_t lo, std::uint32_t hi) { return u64(hi & 0xffu, lo) << 8; }},
      {"eop_base hi (CP_HQD_EOP_BASE_ADDR_HI 7:0)", 38, 37, false, [](auto& d) { return d.eop_base; },
       [](std::uint32_t hi, std::uint32_t lo) { return u64(hi & 0xffu, lo) << 8; }},
      {"ctx_save_base lo (CTX_SAVE_BASE_ADDR_LO 31:12)", 43, 44, true, [](auto& d) { return d.ctx_save_base; },
       [](std::uint32_t lo, std::uint32_t hi) { return u64(hi & 0xffffu, lo & 0xfffff000u); }},
      {"ctx_save_base hi (CTX_SAVE_BASE_ADDR_HI 15:0)", 44, 43, false, [](auto& d) { return d.ctx_save_base; },
       [](std::uint32_t hi, std::uint32_t lo) { return u64(hi & 0xffffu, lo & 0xfffff000u); }},
      {"cntl_stack_offset (CP_HQD_CNTL_STACK_OFFSET 15:2)", 46, 46, false,
       [](auto& d) { return std::uint64_t{d.cntl_stack_offset}; },
       [](std::uint32_t v, std::uint32_t) { return std::uint64_t{v & 0x0000fffcu}; }},
      {"cntl_stack_size (CP_HQD_CNTL_STACK_SIZE 15:12)", 47, 47, false,
       [](auto& d) { return std::uint64_t{d.cntl_stack_size}; },
       [](std::uint32_t v, std::uint32_t) { return std::uint64_t{v & 0x0000f000u}; }},
      {"wg_state_offset (CP_HQD_WG_STATE_OFFSET 26:2)", 48, 48, false,
       [](auto& d) { return std::uint64_t{d.wg_state_offset}; },
       [](std::uint32_t v, std::uint32_t) { return std::uint64_t{v & 0x07fffffcu}; }},
      {"ctx_save_size (CP_HQD_CTX_SAVE_SIZE 26:12)", 49, 49, false,
       [](auto& d) { return std::uint64_t{d.ctx_save_size}; },
       [](std::uint32_t v, std::uint32_t) { return std::uint64_t{v & 0x07fff000u}; }},
      {"wptr lo (CP_HQD_PQ_WPTR_LO 31:0)", 54, 55, true, [](auto& d) { return d.wptr; },
       [](std::uint32_t lo, std::uint32_t hi) { return u64(hi, lo); }},
      {"wptr hi (CP_HQD_PQ_WPTR_HI 31:0)", 55, 54, false, [](auto& d) { return d.wptr; },
       [](std::uint32_t hi, std::uint32_t lo) { return u64(hi, lo); }},
  };
  return cases;
}

}  // namespace

TEST(RegisterFields, EveryHqdFieldDecodesByTheRegisterLayoutOverItsWholeRange) {
  const auto values = probe_values();
  for (const auto& c : hqd_cases()) {
    for (std::uint32_t partner : {0xffffffffu, 0x5a5a5a5au, 0u}) {
      std::size_t failures = 0;
      for (std::uint32_t v : values) {
        Window w{};
        if (c.partner != c.reg) w[c.partner] = partner;
        w[c.reg] = v;
        const auto d = decode_hqd_window(w);
        const std::uint64_t want = c.expected(v, c.partner != c.reg ? partner : 0);
        if (c.decoded(d) != want && failures++ < 3)
          ADD_FAILURE() << c.name << ": register 0x" << std::hex << v << " (partner 0x" << partner
                        << ") decoded as 0x" << c.decoded(d) << ", the register layout says 0x" << want;
      }
    }
  }
}

TEST(RegisterFields, NoFieldReadsAnotherRegister) {
  // Every register but the one(s) a field reads set to all ones: the field still decodes as zero.
  for (const auto& c : hqd_cases()) {
    Window w;
    w.fill(0xffffffffu);
    w[c.reg] = 0;
    if (c.partner != c.reg) w[c.partner] = 0;
    const auto d = decode_hqd_window(w);
    EXPECT_EQ(c.decoded(d), c.expected(0, 0)) << c.name;
  }
}

TEST(RegisterFields, VmidIsTheLowFourBitsOfCpHqdVmid) {
  // gfx942 reports the VMID in VMID (3:0) and IB_VMID (11:8): 0x303 is VMID 3, not 771.
  Window w{};
  w[3] = 0x00000303u;
  EXPECT_EQ(decode_hqd_window(w).vmid, 3u);
  w[3] = 0x03ff0f0fu;  // VQID and IB_VMID set as well
  EXPECT_EQ(decode_hqd_window(w).vmid, 15u);
}

TEST(RegisterFields, RingSizeForEveryQueueSizeValue) {
  for (std::uint32_t qs = 0; qs <= 0x3f; ++qs) {
    for (std::uint32_t other : {0u, 0x14014500u, 0xffffffc0u}) {
      Window w{};
      w[17] = other | qs;
      const std::uint64_t want = qs <= 60 ? (std::uint64_t{1} << (qs + 3)) : 0;
      EXPECT_EQ(decode_hqd_window(w).ring_size, want) << "QUEUE_SIZE " << qs << " with bits 0x" << std::hex << other;
    }
  }
  // The MI308X capture's 0x14014511: QUEUE_SIZE 17 = 2^18 dwords = 1 MiB.
  Window w{};
  w[17] = 0x14014511u;
  EXPECT_EQ(decode_hqd_window(w).ring_size, 1u << 20);
}

TEST(RegisterFields, ShortWindowsDecodeWhatIsThereAndNothingElse) {
  constexpr std::uint32_t kWord = 0x8000000du;  // ACTIVE set, QUEUE_SIZE 13
  for (std::size_t n = 0; n <= 56; ++n) {
    std::vector<std::uint32_t> w(n, kWord);
    const auto d = decode_hqd_window(w);
    EXPECT_EQ(d.ring_size, n > 17 ? std::uint64_t{1} << 16 : 0u) << n;
    EXPECT_EQ(d.active, n > 2) << n;
    EXPECT_EQ(d.wptr, n > 55 ? u64(kWord, kWord) : n > 54 ? kWord : 0u) << n;
  }
}

TEST(RegisterFields, SdmaRingAndReadPointerAddressesFollowTheSdmaRegisterLayout) {
  const auto values = probe_values();
  for (std::uint32_t v : values) {
    std::array<std::uint32_t, 128> m{};
    m.fill(0xffffffffu);
    m[1] = v;  // RB_BASE 31:0
    auto s = decode_sdma_mqd(m);
    ASSERT_EQ(s.ring_base, u64(0xffffffu, v) << 8) << std::hex << v;
    m[2] = v;  // RB_BASE_HI 23:0
    m[1] = 0;
    s = decode_sdma_mqd(m);
    ASSERT_EQ(s.ring_base, u64(v & 0xffffffu, 0) << 8) << std::hex << v;
    m[9] = v;  // RB_RPTR_ADDR_LO 31:2
    m[8] = 0;
    s = decode_sdma_mqd(m);
    ASSERT_EQ(s.rptr_report_address, std::uint64_t{v & 0xfffffffcu}) << std::hex << v;
    m[8] = v;  // RB_RPTR_ADDR_HI 31:0
    m[9] = 0;
    s = decode_sdma_mqd(m);
    ASSERT_EQ(s.rptr_report_address, u64(v, 0)) << std::hex << v;
  }
}
