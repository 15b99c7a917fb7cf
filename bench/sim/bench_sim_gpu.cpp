// How fast the discrete-event GPU model runs: 100,000 kernels through the engine alone, through
// the AQL command processor (packets in memory), and an online/offline scenario (preempted
// scenarios: bench/des).
// Goal: 100,000 kernels in well under a second of CPU.
#include <cstring>
#include <map>
#include <vector>

#include <benchmark/benchmark.h>

#include "gpreempt/kfd_abi.h"
#include "sim/gpu/aql.h"
#include "sim/gpu/gpu_model.h"
#include "sim/gpu/scenario.h"

namespace gs = gpreempt::sim::gpu;
namespace aql = gpreempt::sim::aql;

namespace {

gs::KernelSpec kernel(uint32_t wgs, gs::SimTime wg_ns) {
  gs::KernelSpec k;
  k.name.assign("bench", 5);  // (operator= with a literal trips GCC 12 -Wrestrict)
  k.grid = {wgs * 256, 1, 1};
  k.workgroup = {256, 1, 1};
  k.wg_cost_ns = wg_ns;
  return k;
}

void BM_EngineKernels(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  const uint32_t queues = static_cast<uint32_t>(state.range(1));
  for (auto _ : state) {
    gs::EngineOptions o;
    o.remap_on_queue_change = false;
    gs::GpuEngine e(gs::mi308x_profile(), 1, o);
    for (uint32_t q = 0; q < queues; ++q) e.add_queue({1, q}, 7, false);
    uint64_t done = 0;
    for (uint64_t i = 0; i < n; ++i)
      e.submit_kernel({1, static_cast<uint32_t>(i % queues)}, kernel(64 + i % 1024, 20'000),
                      [&](const gs::JobResult&) { ++done; });
    e.run_until_idle(INT64_MAX);
    if (done != n) state.SkipWithError("not every kernel completed");
    benchmark::DoNotOptimize(done);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}
BENCHMARK(BM_EngineKernels)->Args({100000, 1})->Args({100000, 4})->Unit(benchmark::kMillisecond);

// Process memory that is this process's own, without syscalls: measures the CP, not the kernel.
class LocalMemory final : public gs::ProcessMemory {
 public:
  bool read(int, uint64_t addr, void* dst, std::size_t len) override {
    std::memcpy(dst, reinterpret_cast<const void*>(addr), len);
    return true;
  }
  bool write(int, uint64_t addr, const void* src, std::size_t len) override {
    std::memcpy(reinterpret_cast<void*>(addr), src, len);
    return true;
  }
};

void BM_AqlKernels(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  constexpr uint64_t kSlots = 1024;
  for (auto _ : state) {
    LocalMemory mem;
    gs::GpuModelOptions mo;
    mo.engine.remap_on_queue_change = false;
    gs::GpuModel model(mo, mem);
    std::vector<aql::KernelDispatchPacket> ring(kSlots);
    for (auto& p : ring) p.header = aql::kPacketTypeInvalid;
    alignas(64) uint8_t amdq[aql::kAmdQueueSize] = {};
    alignas(64) int64_t signal[8] = {aql::kSignalKindUser, static_cast<int64_t>(n)};
    aql::KernelDescriptor d{};
    d.magic = aql::kKernelDescriptorMagic;
    d.wg_cost_ns = 20'000;
    gpreempt::sim::QueueView v;
    v.pid = 1;
    v.gpu_id = 1;
    v.uapi_type = gpreempt::kfd::KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
    v.ring_base = reinterpret_cast<uint64_t>(ring.data());
    v.ring_size = kSlots * aql::kPacketSize;
    v.write_pointer_address = reinterpret_cast<uint64_t>(amdq + aql::kAmdQueueWriteDispatchId);
    v.read_pointer_address = reinterpret_cast<uint64_t>(amdq + aql::kAmdQueueReadDispatchId);
    model.queue_created(v);
    auto& wr = *reinterpret_cast<uint64_t*>(amdq + aql::kAmdQueueWriteDispatchId);
    auto& rd = *reinterpret_cast<uint64_t*>(amdq + aql::kAmdQueueReadDispatchId);
    uint64_t written = 0;
    while (rd < n) {
      // Fill the free part of the ring, ring the doorbell, let the device run.
      while (written < n && written - rd < kSlots) {
        auto& p = ring[written % kSlots];
        p = {};
        p.workgroup_size_x = 256;
        p.workgroup_size_y = p.workgroup_size_z = 1;
        p.grid_size_x = static_cast<uint32_t>((64 + written % 1024) * 256);
        p.grid_size_y = p.grid_size_z = 1;
        p.kernel_object = reinterpret_cast<uint64_t>(&d);
        p.completion_signal = reinterpret_cast<uint64_t>(signal);
        p.header = aql::kPacketTypeKernelDispatch;
        wr = ++written;
      }
      model.doorbell(1, 0);
      model.run_until_idle(INT64_MAX);
    }
    if (signal[1] != 0) state.SkipWithError("completion signal did not reach 0");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}
BENCHMARK(BM_AqlKernels)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_Scenario(benchmark::State& state) {
  gs::ScenarioConfig c;
  c.duration_ns = 10'000'000'000;  // 10 s of simulated time
  c.online_rate_hz = 50;
  c.online_request = {kernel(64, 20'000), kernel(64, 20'000), kernel(64, 20'000)};
  c.offline_iteration = {kernel(1024, 700'000)};
  uint64_t kernels = 0;
  for (auto _ : state) {
    auto r = gs::run_scenario(c);
    kernels += r.kernels_completed;
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(static_cast<int64_t>(kernels));
}
BENCHMARK(BM_Scenario)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
