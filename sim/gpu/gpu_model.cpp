#include "sim/gpu/gpu_model.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "gpreempt/kfd_abi.h"
#include "sim/gpu/aql.h"
#include "sim/gpu/rocr_blit.h"
#include "sim/gpu/sdma.h"

namespace gpreempt::sim::gpu {

static_assert(aql::kGpuTimestampPeriodNs == kGpuClockPeriodNs, "one GPU timestamp counter");

struct GpuModel::CpQueue {
  QueueView view;
  uint64_t slots = 0;    // ring entries
  uint64_t fetched = 0;  // next dispatch id to read
  uint64_t completed = 0;
  std::string error;
};

namespace {

bool is_compute(uint32_t uapi_type) {
  return uapi_type == kfd::KFD_IOC_QUEUE_TYPE_COMPUTE ||
         uapi_type == kfd::KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
}

bool is_sdma(uint32_t uapi_type) {
  return uapi_type == kfd::KFD_IOC_QUEUE_TYPE_SDMA || uapi_type == kfd::KFD_IOC_QUEUE_TYPE_SDMA_XGMI ||
         uapi_type == kfd::KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID;
}

}  // namespace

GpuModel::GpuModel(GpuModelOptions options, ProcessMemory& memory)
    : options_(std::move(options)), memory_(memory) {}

GpuModel::~GpuModel() = default;

GpuEngine& GpuModel::engine(uint32_t gpu_id) {
  auto it = engines_.find(gpu_id);
  if (it == engines_.end()) {
    EngineOptions eo = options_.engine;
    eo.seed = options_.engine.seed ^ (static_cast<uint64_t>(gpu_id) << 32);
    auto e = std::make_unique<GpuEngine>(options_.profile, gpu_id, eo);
    e->advance_to(now_);
    it = engines_.emplace(gpu_id, std::move(e)).first;
  }
  return *it->second;
}

std::vector<uint32_t> GpuModel::gpu_ids() const {
  std::vector<uint32_t> ids;
  for (const auto& [id, e] : engines_) ids.push_back(id);
  return ids;
}

void GpuModel::queue_created(const QueueView& v) {
  if (is_sdma(v.uapi_type)) {
    const QueueKey key{v.pid, v.queue_id};
    sdma_[key] = std::make_unique<SdmaQueue>(v);  // no compute slot
    if (v.suspended) sdma_unmapped_.insert(key);
    return;
  }
  if (!is_compute(v.uapi_type)) return;
  const QueueKey key{v.pid, v.queue_id};
  auto q = std::make_unique<CpQueue>();
  q->view = v;
  q->slots = v.ring_size / aql::kPacketSize;
  // The queue starts where the runtime's read index is (0 for a fresh ROCr queue).
  uint64_t rd = 0;
  if (v.read_pointer_address && memory_.read(v.pid, v.read_pointer_address, &rd, sizeof rd)) {
    q->fetched = rd;
    q->completed = rd;
  }
  if (q->slots == 0) q->error = "ring size smaller than one AQL packet";
  queues_[key] = std::move(q);
  engine(v.gpu_id).add_queue(key, v.priority, v.suspended);
}

void GpuModel::queue_destroyed(int pid, uint32_t queue_id, uint32_t gpu_id) {
  const QueueKey key{pid, queue_id};
  queues_.erase(key);
  sdma_.erase(key);
  sdma_unmapped_.erase(key);
  auto it = engines_.find(gpu_id);
  if (it != engines_.end()) it->second->remove_queue(key);
}

void GpuModel::execute_runlist(uint32_t gpu_id, uint32_t grace_period,
                               const std::vector<QueueView>& runnable,
                               std::function<void(int)> done) {
  std::vector<QueueKey> keys;
  std::set<QueueKey> sdma_mapped;
  for (const auto& v : runnable) {
    if (v.gpu_id != gpu_id) continue;
    if (is_compute(v.uapi_type)) keys.push_back({v.pid, v.queue_id});
    else if (is_sdma(v.uapi_type)) sdma_mapped.insert({v.pid, v.queue_id});
  }
  // The SDMA queues of this GPU follow the runlist once the HWS has applied it (the compute
  // engine's unmap and map stand for both: a copy's own preemption is not modelled).
  engine(gpu_id).execute_runlist(
      grace_period, keys, [this, gpu_id, sdma_mapped = std::move(sdma_mapped), done = std::move(done)](int r) {
        if (r == 0)
          for (const auto& [key, s] : sdma_) {
            if (s->view().gpu_id != gpu_id) continue;
            if (sdma_mapped.count(key)) sdma_unmapped_.erase(key);
            else sdma_unmapped_.insert(key);
          }
        if (done) done(r);
      });
}

std::vector<QueueView> GpuModel::queue_views() const {
  std::vector<QueueView> v;
  v.reserve(queues_.size());
  for (const auto& [k, q] : queues_) v.push_back(q->view);
  return v;
}

uint64_t GpuModel::gpu_clock_counter() const {
  // Never behind a stamp already written (an event may be handled a little after its time).
  const SimTime t = clock_ ? std::max(clock_(), now_) : now_;
  return static_cast<uint64_t>(t) / kGpuClockPeriodNs;
}

void GpuModel::fail_queue(CpQueue& q, std::string why) {
  if (q.error.empty()) q.error = std::move(why);
}

void GpuModel::doorbell(int pid, uint32_t queue_id) {
  auto it = queues_.find(QueueKey{pid, queue_id});
  if (it != queues_.end()) fetch(*it->second);
}

void GpuModel::poll() {
  std::vector<CpQueue*> qs;
  for (auto& [k, q] : queues_) qs.push_back(q.get());
  for (CpQueue* q : qs) fetch(*q);
  for (auto& [id, e] : engines_) e->recheck_barriers();
  for (auto& [key, s] : sdma_) {
    if (sdma_unmapped_.count(key)) continue;
    const auto progress = s->run(memory_, gpu_clock_counter());
    if (progress.wrote_memory) signalled_.insert(key.pid);
    if (progress.interrupted) interrupted_.insert(key.pid);
  }
}

void GpuModel::fetch(CpQueue& q) {
  if (!q.error.empty()) return;
  const QueueView& v = q.view;
  uint64_t wr = 0;
  if (!memory_.read(v.pid, v.write_pointer_address, &wr, sizeof wr)) {
    fail_queue(q, "cannot read the write dispatch id");
    return;
  }
  GpuEngine& eng = engine(v.gpu_id);
  const QueueKey key{v.pid, v.queue_id};
  while (q.fetched < wr) {
    const uint64_t id = q.fetched;
    const uint64_t addr = v.ring_base + (id % q.slots) * aql::kPacketSize;
    uint8_t raw[aql::kPacketSize];
    if (!memory_.read(v.pid, addr, raw, sizeof raw)) {
      fail_queue(q, "cannot read the ring at dispatch id " + std::to_string(id));
      return;
    }
    uint16_t header = 0;
    std::memcpy(&header, raw, sizeof header);
    const uint16_t type = header & 0xff;
    // Not published yet: the runtime writes the header last.
    if (type == aql::kPacketTypeInvalid) return;
    const int pid = v.pid;
    const uint32_t qid = v.queue_id;
    if (type == aql::kPacketTypeKernelDispatch) {
      aql::KernelDispatchPacket p;
      std::memcpy(&p, raw, sizeof p);
      aql::KernelDescriptor d{};
      if (!memory_.read(pid, p.kernel_object, &d, sizeof d)) {
        fail_queue(q, "dispatch id " + std::to_string(id) + ": kernel_object is not readable");
        return;
      }
      KernelSpec spec;
      KernelKind kind = KernelKind::kGeneric;
      std::optional<BlitEffect> blit;
      if (d.magic == aql::kKernelDescriptorMagic) {
        spec.name.assign(d.name, strnlen(d.name, aql::kKernelNameMax));
        spec.wg_cost_ns = static_cast<SimTime>(d.wg_cost_ns);
        if (d.kind <= static_cast<uint8_t>(KernelKind::kVector)) kind = static_cast<KernelKind>(d.kind);
      } else if (aql::is_amdhsa_kernel_descriptor(&d)) {
        // A real code object's kernel (a ROCr program's, or ROCr's own blit kernels): its ISA is
        // not executed; it takes the generic kind's registers and the default workgroup cost.
        // ROCr's blits still move their bytes, at completion (sim/gpu/rocr_blit.h says why).
        uint8_t bytes[sizeof d];
        std::memcpy(bytes, &d, sizeof d);
        blit = rocr_blit_effect(bytes, p, memory_, pid);
        spec.name = (blit ? "rocr-blit@" : "amdhsa@") + std::to_string(p.kernel_object);
      } else {
        fail_queue(q, "dispatch id " + std::to_string(id) +
                          ": kernel_object points at neither a simulated nor an AMDHSA kernel "
                          "descriptor");
        return;
      }
      spec.grid = {p.grid_size_x, p.grid_size_y, p.grid_size_z};
      spec.workgroup = {p.workgroup_size_x, p.workgroup_size_y, p.workgroup_size_z};
      spec.resources = resources_for(kind);
      // A workgroup that cannot fit a CU never launches: the queue stops, as on a real CP.
      if (std::string why; !occupancy(eng.profile(), spec, &why)) {
        fail_queue(q, "dispatch id " + std::to_string(id) + ": " + why);
        return;
      }
      const uint64_t sig = p.completion_signal;
      eng.submit_kernel(key, spec, [this, pid, qid, id, sig, blit](const JobResult& r) {
        if (blit) {
          std::string why;
          if (!apply_blit(*blit, memory_, pid, &why)) {
            // A blit that faults: the queue stops and its signal is never written.
            auto it = queues_.find(QueueKey{pid, qid});
            if (it != queues_.end()) fail_queue(*it->second, "dispatch id " + std::to_string(id) + ": " + why);
            return;
          }
          ++blits_;
        }
        complete_packet(pid, qid, id, sig, r);
      });
    } else if (type == aql::kPacketTypeBarrierAnd || type == aql::kPacketTypeBarrierOr) {
      aql::BarrierAndPacket p;
      std::memcpy(&p, raw, sizeof p);
      std::vector<uint64_t> deps;
      for (uint64_t s : p.dep_signal)
        if (s) deps.push_back(s);
      const bool any = type == aql::kPacketTypeBarrierOr;
      ProcessMemory* mem = &memory_;
      auto ready = [mem, pid, deps, any]() {
        if (deps.empty()) return true;
        bool all = true, one = false;
        for (uint64_t s : deps) {
          int64_t value = 1;
          const bool zero = mem->read(pid, s + aql::kSignalValue, &value, sizeof value) && value == 0;
          all &= zero;
          one |= zero;
        }
        return any ? one : all;
      };
      const uint64_t sig = p.completion_signal;
      eng.submit_barrier(key, ready, [this, pid, qid, id, sig](const JobResult& r) {
        complete_packet(pid, qid, id, sig, r);
      });
    } else if (type == aql::kPacketTypeVendor && raw[2] == aql::kAmdFormatBarrierValue) {
      aql::AmdBarrierValuePacket p;
      std::memcpy(&p, raw, sizeof p);
      ProcessMemory* mem = &memory_;
      auto ready = [mem, pid, p]() {
        int64_t v = 0;
        if (!p.signal || !mem->read(pid, p.signal + aql::kSignalValue, &v, sizeof v)) return true;
        v &= p.mask;
        switch (p.cond) {
          case 0: return v == p.value;
          case 1: return v != p.value;
          case 2: return v < p.value;
          default: return v >= p.value;
        }
      };
      const uint64_t sig = p.completion_signal;
      eng.submit_barrier(key, ready, [this, pid, qid, id, sig](const JobResult& r) {
        complete_packet(pid, qid, id, sig, r);
      });
    } else if (type == aql::kPacketTypeVendor && raw[2] == aql::kAmdFormatPm4Ib) {
      // Cache invalidations and writebacks: the simulated GPU has no caches to act on.
      uint64_t sig = 0;
      std::memcpy(&sig, raw + 56, sizeof sig);
      eng.submit_barrier(key, [] { return true; }, [this, pid, qid, id, sig](const JobResult& r) {
        complete_packet(pid, qid, id, sig, r);
      });
    } else {
      fail_queue(q, "dispatch id " + std::to_string(id) + ": unsupported packet type " +
                        std::to_string(type));
      return;
    }
    ++q.fetched;
  }
}

void GpuModel::complete_packet(int pid, uint32_t queue_id, uint64_t dispatch_id, uint64_t signal,
                               const JobResult& r) {
  auto it = queues_.find(QueueKey{pid, queue_id});
  if (it == queues_.end()) return;
  CpQueue& q = *it->second;
  const QueueView& v = q.view;
  // Hand the slot back to the producer, then publish progress, then the signal: a waiter that
  // sees the signal drop can rely on the read index too.
  const uint16_t invalid = aql::kPacketTypeInvalid << aql::kHeaderType;
  const uint64_t slot = v.ring_base + (dispatch_id % q.slots) * aql::kPacketSize;
  bool ok = memory_.write(pid, slot, &invalid, sizeof invalid);
  const uint64_t rd = dispatch_id + 1;
  ok = ok && memory_.write(pid, v.read_pointer_address, &rd, sizeof rd);
  if (ok && signal) {
    int64_t value = 0;
    // In the GPU's timestamp counter, as a CP writes them (gpu_clock_counter).
    const uint64_t ts[2] = {static_cast<uint64_t>(r.started) / kGpuClockPeriodNs,
                            static_cast<uint64_t>(r.finished) / kGpuClockPeriodNs};
    ok = memory_.write(pid, signal + aql::kSignalStartTs, ts, sizeof ts) &&
         memory_.read(pid, signal + aql::kSignalValue, &value, sizeof value);
    --value;
    ok = ok && memory_.write(pid, signal + aql::kSignalValue, &value, sizeof value);
    // An interrupt signal (a mailbox set): the event id goes to the mailbox, the KFD event page
    // slot, and the CP raises an interrupt (take_interrupted) that sets the event.
    uint64_t mailbox = 0;
    if (ok && memory_.read(pid, signal + aql::kSignalEventMailbox, &mailbox, sizeof mailbox) &&
        mailbox) {
      uint32_t event_id = 0;
      if (memory_.read(pid, signal + aql::kSignalEventId, &event_id, sizeof event_id)) {
        const uint64_t slot_value = event_id;
        if (memory_.write(pid, mailbox, &slot_value, sizeof slot_value)) interrupted_.insert(pid);
      }
    }
    if (ok) signalled_.insert(pid);
  }
  if (!ok) {
    fail_queue(q, "cannot write completion of dispatch id " + std::to_string(dispatch_id));
    return;
  }
  q.completed = rd;
}

std::optional<SimTime> GpuModel::next_event_time() const {
  std::optional<SimTime> best;
  for (const auto& [id, e] : engines_) {
    auto t = e->next_event_time();
    if (t && (!best || *t < *best)) best = t;
  }
  return best;
}

void GpuModel::advance_to(SimTime t) {
  // Engines are independent devices; a barrier on one waiting for a signal of another is seen
  // at the next event or poll.
  while (auto next = next_event_time()) {
    if (*next > t) break;
    for (auto& [id, e] : engines_) e->advance_to(*next);
  }
  for (auto& [id, e] : engines_) e->advance_to(t);
  now_ = std::max(now_, t);
}

SimTime GpuModel::run_until_idle(SimTime limit) {
  while (auto t = next_event_time()) {
    if (*t > limit) break;
    advance_to(*t);
  }
  return now_;
}

std::vector<CpQueueStats> GpuModel::queue_stats() const {
  std::vector<CpQueueStats> out;
  for (const auto& [k, q] : queues_)
    out.push_back({k.pid, k.queue_id, q->view.gpu_id, q->fetched, q->completed, q->error});
  return out;
}

nlohmann::json GpuModel::stats_json(uint64_t since_seq, std::size_t max_records) const {
  std::size_t budget = max_records;
  nlohmann::json j;
  j["now_ns"] = now_;
  j["profile"] = options_.profile.name;
  j["rocr_blits"] = blits_;
  j["sdma_queues"] = nlohmann::json::array();
  for (const auto& [key, s] : sdma_)
    j["sdma_queues"].push_back({{"pid", key.pid}, {"queue_id", key.queue_id},
                                {"gpu_id", s->view().gpu_id}, {"read_bytes", s->read_bytes()},
                                {"packets", s->packets()}, {"error", s->error()},
                                {"mapped", sdma_unmapped_.count(key) == 0}});
  j["gpus"] = nlohmann::json::array();
  for (const auto& [id, e] : engines_) {
    const auto& c = e->counters();
    nlohmann::json g;
    g["gpu_id"] = id;
    g["counters"] = {{"kernels_completed", c.kernels_completed},
                     {"barriers_completed", c.barriers_completed},
                     {"workgroups_completed", c.workgroups_completed},
                     {"runlist_updates", c.runlist_updates},
                     {"runlist_completed", c.runlist_completed},
                     {"suspends", c.suspends},
                     {"resumes", c.resumes},
                     {"quantum_rotations", c.quantum_rotations},
                     {"waves_saved", c.waves_saved},
                     {"waves_restored", c.waves_restored}};
    const auto& records = e->records();
    // Records are in seq order: skip the old ones by binary search, not by a scan of the history.
    auto first = std::upper_bound(records.begin(), records.end(), since_seq,
                                  [](uint64_t s, const RunlistRecord& r) { return s < r.seq; });
    nlohmann::json list = nlohmann::json::array();
    // One budget for all GPUs: a reply must fit one socket message whatever the GPU count.
    for (auto it = first; it != records.end() && budget > 0; ++it, --budget) list.push_back(to_json(*it));
    g["last_seq"] = records.empty() ? uint64_t{0} : records.back().seq;
    g["more"] = static_cast<std::size_t>(records.end() - first) > list.size();
    g["runlist"] = std::move(list);
    j["gpus"].push_back(std::move(g));
  }
  j["queues"] = nlohmann::json::array();
  for (const auto& s : queue_stats())
    j["queues"].push_back({{"pid", s.pid},
                           {"queue_id", s.queue_id},
                           {"gpu_id", s.gpu_id},
                           {"fetched", s.fetched},
                           {"completed", s.completed},
                           {"error", s.error}});
  return j;
}

}  // namespace gpreempt::sim::gpu
