// A simulated KFD with a fake host (processes, ptrace links, memory, fd tables, event files)
// and a scheduler the test controls: the unit-test rig for sim/device.
#pragma once

#include <gpreempt/kfd_abi.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "device_profile.h"
#include "kfd_device.h"

namespace gpreempt::sim::testing {

using namespace gpreempt::kfd;

class FakeHost final : public HostEnv {
 public:
  std::map<int, int> tgids;                // tid -> tgid (a process's pid maps to itself)
  std::map<int, int> tracers;              // tid -> TracerPid
  std::map<std::pair<int, int>, int> fds;  // (pid, fd) -> file id
  std::map<int, int> live_refs;            // handle -> references held by the device
  std::map<int, int> signals;              // file id -> bytes written
  std::map<int, int> handle_file;          // handle -> file id
  std::map<int, uint32_t> render_minors;   // file id -> render minor (amdgpu DRM files only)

  void add_process(int pid, std::vector<int> extra_threads = {}) {
    tgids[pid] = pid;
    for (int t : extra_threads) tgids[t] = pid;
  }
  void remove_process(int pid) {
    std::erase_if(tgids, [&](const auto& kv) { return kv.second == pid; });
  }
  // Memory of `pid`: one region per call, at user addresses.
  uint64_t alloc(int pid, std::size_t n) {
    auto& regions = mem_[pid];
    uint64_t base = 0x100000000ull + static_cast<uint64_t>(pid % 1024) * 0x1000000000ull +
                    regions.size() * 0x1000000ull;
    regions.push_back({base, std::vector<uint8_t>(n, 0)});
    return base;
  }
  template <class T>
  T get(int pid, uint64_t addr) {
    T v{};
    EXPECT_TRUE(read_memory(pid, addr, &v, sizeof v)) << "no memory at " << std::hex << addr;
    return v;
  }
  template <class T>
  void put(int pid, uint64_t addr, const T& v) {
    EXPECT_TRUE(write_memory(pid, addr, &v, sizeof v)) << "no memory at " << std::hex << addr;
  }
  int open_file(int pid, int fd) {
    int id = next_file_++;
    fds[{pid, fd}] = id;
    return id;
  }
  // An open of simulated render node `minor` (an amdgpu DRM file).
  int open_render_node(int pid, int fd, uint32_t minor) {
    int id = open_file(pid, fd);
    render_minors[id] = minor;
    return id;
  }

  std::optional<int> tgid_of(int tid) override {
    auto it = tgids.find(tid);
    if (it == tgids.end()) return std::nullopt;
    return it->second;
  }
  int tracer_of(int tid) override {
    auto it = tracers.find(tid);
    return it == tracers.end() ? 0 : it->second;
  }
  bool read_memory(int pid, uint64_t addr, void* dst, std::size_t len) override {
    auto* p = find(pid, addr, len);
    if (!p) return false;
    std::memcpy(dst, p, len);
    return true;
  }
  bool write_memory(int pid, uint64_t addr, const void* src, std::size_t len) override {
    auto* p = find(pid, addr, len);
    if (!p) return false;
    std::memcpy(p, src, len);
    return true;
  }
  std::optional<int> acquire_file(int pid, int fd) override {
    auto it = fds.find({pid, fd});
    if (it == fds.end()) return std::nullopt;
    int h = next_handle_++;
    handle_file[h] = it->second;
    live_refs[h] = 1;
    return h;
  }
  void release_file(int handle) override { live_refs.erase(handle); }
  void signal_file(int handle) override { ++signals[handle_file.at(handle)]; }
  bool same_file(int a, int b) override { return handle_file.at(a) == handle_file.at(b); }
  std::optional<uint32_t> drm_render_minor(int handle) override {
    auto it = render_minors.find(handle_file.at(handle));
    if (it == render_minors.end()) return std::nullopt;
    return it->second;
  }

 private:
  struct Region {
    uint64_t base;
    std::vector<uint8_t> bytes;
  };
  uint8_t* find(int pid, uint64_t addr, std::size_t len) {
    for (auto& r : mem_[pid])
      if (addr >= r.base && addr + len <= r.base + r.bytes.size())
        return r.bytes.data() + (addr - r.base);
    return nullptr;
  }
  std::map<int, std::vector<Region>> mem_;
  int next_file_ = 1;
  int next_handle_ = 1000;
};

// A scheduler whose runlist changes complete only when the test says so.
class ManualHws final : public Hws {
 public:
  struct Request {
    uint32_t gpu_id;
    uint32_t grace_period;
    std::vector<QueueView> runnable;
    std::function<void(int)> done;
    bool finished = false;
  };
  std::vector<Request> requests;
  std::vector<std::pair<int, uint32_t>> destroyed;
  bool auto_complete = false;
  int auto_result = 0;

  void queue_destroyed(int pid, uint32_t qid, uint32_t) override {
    destroyed.emplace_back(pid, qid);
  }
  void execute_runlist(uint32_t gpu_id, uint32_t grace, const std::vector<QueueView>& runnable,
                       std::function<void(int)> done) override {
    requests.push_back({gpu_id, grace, runnable, done, auto_complete});
    if (auto_complete) done(auto_result);
  }
  // Completes the oldest outstanding request.
  void complete_next(int result = 0) {
    for (auto& r : requests)
      if (!r.finished) {
        r.finished = true;
        auto done = r.done;
        done(result);
        return;
      }
    ADD_FAILURE() << "no runlist change is waiting";
  }
  std::size_t outstanding() const {
    std::size_t n = 0;
    for (const auto& r : requests) n += !r.finished;
    return n;
  }
};

struct Completion {
  long ret;
  std::vector<uint8_t> args;
};

class Rig {
 public:
  explicit Rig(DeviceOptions options = {}, const char* profile = "mi308x", uint32_t gpus = 1)
      : profile_(make_profile(profile, gpus)),
        hws(std::make_shared<ManualHws>()),
        dev(std::make_unique<KfdDevice>(profile_, options, host, hws)) {
    hws->auto_complete = true;
    dev->on_complete = [this](CallToken t, long ret, std::vector<uint8_t> args) {
      completions[t] = {ret, std::move(args)};
    };
  }

  FakeHost host;
  DeviceProfile profile_;
  std::shared_ptr<ManualHws> hws;
  std::unique_ptr<KfdDevice> dev;
  std::map<CallToken, Completion> completions;
  CallToken next_token = 1;
  CallToken last_token = 0;

  uint32_t gpu() const { return profile_.gpus.at(0).gpu_id; }
  // `pid` opens the render node of GPU `index` as `fd`; returns the file id.
  int open_render(int pid, int fd, std::size_t index = 0) {
    return host.open_render_node(pid, fd, profile_.gpus.at(index).drm_render_minor);
  }

  // A live process with /dev/kfd open.
  void spawn(int pid, std::vector<int> threads = {}) {
    host.add_process(pid, threads);
    ASSERT_EQ(dev->open({pid, pid}), 0);
  }

  // Raw ioctl with the caller's size = sizeof(T) (or `size`).
  template <class T>
  IoctlResult raw(Caller c, unsigned long request, T& args, std::size_t size = sizeof(T)) {
    // A size-0 call (an ioctl number without arguments) has an empty buffer whose data() may be
    // null, and memcpy from or to null is undefined even for 0 bytes.
    std::vector<uint8_t> buf(size, 0);
    const std::size_t n = std::min(size, sizeof(T));
    if (n) std::memcpy(buf.data(), &args, n);
    last_token = next_token++;
    auto r = dev->ioctl(c, request, buf, last_token);
    if (n) std::memcpy(&args, buf.data(), n);
    return r;
  }
  // An ioctl that must not block; returns its value.
  template <class T>
  long call(Caller c, unsigned long request, T& args, std::size_t size = sizeof(T)) {
    auto r = raw(c, request, args, size);
    EXPECT_FALSE(r.blocked) << "ioctl blocked unexpectedly";
    return r.ret;
  }

  kfd_ioctl_create_queue_args aql_queue(int pid, uint32_t ring_size = 0x100000) {
    kfd_ioctl_create_queue_args a{};
    a.ring_base_address = host.alloc(pid, 256);  // ring content is not read by the device
    uint64_t amd_queue = host.alloc(pid, 0x100);
    a.write_pointer_address = amd_queue + 0x38;
    a.read_pointer_address = amd_queue + 0x80;
    a.ring_size = ring_size;
    a.gpu_id = gpu();
    a.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
    a.queue_percentage = 100;
    a.queue_priority = 7;
    a.ctx_save_restore_address = host.alloc(pid, 0x1000);
    a.ctx_save_restore_size = profile_.cwsr_size;
    a.ctl_stack_size = profile_.ctl_stack_size;
    return a;
  }
  long create(int pid, kfd_ioctl_create_queue_args& a) {
    return call({pid, pid}, AMDKFD_IOC_CREATE_QUEUE, a);
  }
  // Creates a queue and returns its id (asserting success).
  uint32_t new_queue(int pid) {
    auto a = aql_queue(pid);
    EXPECT_EQ(create(pid, a), 0);
    return a.queue_id;
  }
  long destroy(int pid, uint32_t qid) {
    kfd_ioctl_destroy_queue_args a{qid, 0};
    return call({pid, pid}, AMDKFD_IOC_DESTROY_QUEUE, a);
  }
  long runtime_enable(int pid, bool enable = true) {
    kfd_ioctl_runtime_enable_args a{0x1234, enable ? KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK : 0u, 0};
    return call({pid, pid}, AMDKFD_IOC_RUNTIME_ENABLE, a);
  }

  static kfd_ioctl_dbg_trap_args op(int target, uint32_t op) {
    kfd_ioctl_dbg_trap_args a{};
    a.pid = static_cast<uint32_t>(target);
    a.op = op;
    return a;
  }
  long dbg(Caller c, kfd_ioctl_dbg_trap_args& a) { return call(c, AMDKFD_IOC_DBG_TRAP, a); }

  // The usual debugger set-up: `dbg` ptrace-attached to `target`, session enabled with an event
  // pipe (fd 7 of the debugger), queues snapshotted so they lose EC_QUEUE_NEW.
  int attach(int debugger, int target, uint64_t mask = KFD_EC_MASK(EC_PROCESS_RUNTIME)) {
    host.tracers[target] = debugger;
    int file = host.open_file(debugger, 7);
    auto a = op(target, KFD_IOC_DBG_TRAP_ENABLE);
    a.enable.exception_mask = mask;
    a.enable.dbg_fd = 7;
    EXPECT_EQ(dbg({debugger, debugger}, a), 0);
    return file;
  }
  // GET_QUEUE_SNAPSHOT clearing `clear`; returns the entries written.
  std::vector<kfd_queue_snapshot_entry> snapshot(int debugger, int target, uint32_t capacity = 64,
                                                 uint64_t clear = KFD_EC_MASK(EC_QUEUE_NEW),
                                                 uint32_t* total = nullptr) {
    uint64_t buf =
        host.alloc(debugger, std::max<uint32_t>(capacity, 1) * sizeof(kfd_queue_snapshot_entry));
    auto a = op(target, KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT);
    a.queue_snapshot.exception_mask = clear;
    a.queue_snapshot.snapshot_buf_ptr = buf;
    a.queue_snapshot.num_queues = capacity;
    a.queue_snapshot.entry_size = sizeof(kfd_queue_snapshot_entry);
    EXPECT_EQ(dbg({debugger, debugger}, a), 0);
    if (total) *total = a.queue_snapshot.num_queues;
    std::vector<kfd_queue_snapshot_entry> out;
    for (uint32_t i = 0; i < std::min(capacity, a.queue_snapshot.num_queues); ++i)
      out.push_back(
          host.get<kfd_queue_snapshot_entry>(debugger, buf + i * sizeof(kfd_queue_snapshot_entry)));
    return out;
  }
  // SUSPEND or RESUME of `ids`; returns the ioctl value and leaves the array in `ids`.
  IoctlResult suspend_resume(int debugger, int target, std::vector<uint32_t>& ids, bool suspend,
                             uint64_t clear = 0, uint32_t grace = 0) {
    uint64_t buf = host.alloc(debugger, std::max<std::size_t>(ids.size(), 1) * 4);
    for (std::size_t i = 0; i < ids.size(); ++i) host.put(debugger, buf + i * 4, ids[i]);
    auto a = op(target, suspend ? KFD_IOC_DBG_TRAP_SUSPEND_QUEUES : KFD_IOC_DBG_TRAP_RESUME_QUEUES);
    if (suspend) {
      a.suspend_queues.exception_mask = clear;
      a.suspend_queues.queue_array_ptr = buf;
      a.suspend_queues.num_queues = static_cast<uint32_t>(ids.size());
      a.suspend_queues.grace_period = grace;
    } else {
      a.resume_queues.queue_array_ptr = buf;
      a.resume_queues.num_queues = static_cast<uint32_t>(ids.size());
    }
    auto r = raw({debugger, debugger}, AMDKFD_IOC_DBG_TRAP, a);
    array_ptr = buf;
    array_owner = debugger;
    if (!r.blocked) read_back(ids);
    return r;
  }
  void read_back(std::vector<uint32_t>& ids) {
    for (std::size_t i = 0; i < ids.size(); ++i)
      ids[i] = host.get<uint32_t>(array_owner, array_ptr + i * 4);
  }
  long suspend(int debugger, int target, std::vector<uint32_t>& ids, uint64_t clear = 0) {
    auto r = suspend_resume(debugger, target, ids, true, clear);
    EXPECT_FALSE(r.blocked);
    return r.ret;
  }
  long resume(int debugger, int target, std::vector<uint32_t>& ids) {
    auto r = suspend_resume(debugger, target, ids, false);
    EXPECT_FALSE(r.blocked);
    return r.ret;
  }
  bool suspended(int pid, uint32_t qid) const {
    for (const auto& q : dev->queues())
      if (q.pid == pid && q.queue_id == qid) return q.suspended;
    ADD_FAILURE() << "no queue " << qid << " of pid " << pid;
    return false;
  }
  bool exists(int pid, uint32_t qid) const {
    for (const auto& q : dev->queues())
      if (q.pid == pid && q.queue_id == qid) return true;
    return false;
  }

  uint64_t array_ptr = 0;
  int array_owner = 0;
};

}  // namespace gpreempt::sim::testing
