// gpreempt._gpreempt.sim: the simulated GPU's user runtime (simrt) for Python.
//
// A Device is one process's simrt runtime (open /dev/kfd, RUNTIME_ENABLE, topology) plus the
// timing profile the simulated machine runs (sim/gpu/profile.h, with the topology's geometry, as
// kfdsimd builds it) and the offset between this host's monotonic clock and the simulated GPU
// clock. Queues dispatch kernels priced by the roofline of sim/gpu/roofline.h; while a trace is
// open, every dispatch gets a completion signal and, once finished, one JSON line in that trace.
// Waits release the GIL and wake every 50 ms to let Python see signals (Ctrl-C).
#include "sim.h"

#include <fcntl.h>
#include <pybind11/stl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sim/device/device_profile.h"
#include "sim/gpu/model_config.h"
#include "sim/gpu/roofline.h"
#include "sim/protocol/gpu_stats_query.h"
#include "sim/protocol/machine_paths.h"
#include "simrt/simrt.hpp"

namespace py = pybind11;
namespace gpu = gpreempt::sim::gpu;

namespace gpreempt::pysim {
namespace {

using Clock = std::chrono::steady_clock;

int64_t host_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void raise_runtime(const std::string& what) { throw std::runtime_error(what); }

bool shim_loaded() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libkfdshim") != std::string::npos) return true;
  return false;
}

// Why this process cannot have a simulated GPU, in words a user can act on.
std::string unavailable_reason() {
  if (shim_loaded()) return {};
  if (::access("/dev/kfd", F_OK) == 0)
    return "gpreempt.sim runs on the simulated GPU only: this machine has a real /dev/kfd, and "
           "simrt's kernel descriptors cannot run on real hardware. On a real AMD GPU use ROCm "
           "PyTorch (torch.cuda on HIP); gpreempt.Context works on its queues as on simulated ones";
  return "gpreempt.sim needs the simulated KFD and this process is not running on it: start the "
         "program as `kfdsim run -- python3 your_script.py` (build/bin/kfdsim; with "
         "PYTHONPATH=build/python from a build tree)";
}

// The timing profile kfdsimd uses for this machine: the model named by GPREEMPT_SIM_PROFILE or
// by the machine's device profile (found by PCI device id), with GPREEMPT_SIM_PARAMS applied and
// the geometry of the topology (gpu_hardware.cpp does the same from the DeviceProfile).
gpu::GpuProfile machine_profile(const std::map<std::string, uint64_t>& props) {
  auto prop = [&](const char* k) -> uint64_t {
    auto it = props.find(k);
    return it == props.end() ? 0 : it->second;
  };
  std::map<std::string, std::string> env;
  for (const char* k : gpu::kModelEnvVars)
    if (const char* v = std::getenv(k)) env[k] = v;
  if (!env.count("GPREEMPT_SIM_PROFILE")) {
    for (const auto& name : gpreempt::sim::profile_names()) {
      if (gpreempt::sim::make_profile(name).device_id == prop("device_id") &&
          gpu::profile_by_name(name)) {
        env["GPREEMPT_SIM_PROFILE"] = name;
        break;
      }
    }
  }
  std::string err;
  auto opts = gpu::parse_model_config(env, &err);
  if (!opts) raise_runtime("gpreempt.sim: " + err);
  gpu::GpuProfile p = opts->profile;
  const uint64_t xcc = prop("num_xcc"), simds = prop("simd_count"), per_cu = prop("simd_per_cu");
  if (xcc && simds && per_cu) {
    p.num_xcc = static_cast<uint32_t>(xcc);
    p.cus_per_xcc = static_cast<uint32_t>(simds / per_cu / xcc);
    p.simds_per_cu = static_cast<uint32_t>(per_cu);
  }
  if (auto mhz = prop("max_engine_clk_fcompute")) p.clock_mhz = static_cast<uint32_t>(mhz);
  return p;
}

// Host monotonic ns at simulated time 0. The daemon's simulated clock is its monotonic clock
// since it started; its stats carry `now_ns` as of its last tick, so the smallest
// (reply time − now_ns) over a few asks is the closest bound.
int64_t simulated_epoch() {
  const auto paths = gpreempt::sim::protocol::machine_paths(
      [](const char* k) { return std::getenv(k); }, static_cast<unsigned>(getuid()));
  std::optional<int64_t> best;
  for (int i = 0; i < 3; ++i) {
    auto r = gpreempt::sim::protocol::fetch_gpu_stats(paths.socket, UINT64_MAX >> 1);
    const int64_t t = host_ns();
    if (r.error == -ENODEV)
      raise_runtime(
          "gpreempt.sim: this simulated machine has no GPU model (kfdsim --hardware instant), so "
          "its kernels would never run; use the default --hardware gpu");
    if (r.error) raise_runtime("gpreempt.sim: cannot reach the simulated machine at " +
                               paths.socket + ": " + std::strerror(-r.error));
    const int64_t e = t - r.stats.value("now_ns", int64_t{0});
    if (!best || e < *best) best = e;
  }
  return *best;
}

gpu::MathType math_type(const std::string& s) {
  if (auto t = gpu::math_type_by_name(s)) return *t;
  throw py::value_error("math type must be fp64, fp32, tf32, fp16, bf16, fp8 or int8, got '" + s + "'");
}

using Dim3 = std::array<uint32_t, 3>;

Dim3 dim3(const std::vector<uint64_t>& v, const char* what) {
  if (v.empty() || v.size() > 3)
    throw py::value_error(std::string(what) + " must have 1 to 3 dimensions");
  Dim3 d{1, 1, 1};
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == 0 || v[i] > UINT32_MAX)
      throw py::value_error(std::string(what) + " dimensions must be 1..2^32-1");
    d[i] = static_cast<uint32_t>(v[i]);
  }
  return d;
}

// Waits with the GIL released, waking every 50 ms for Python's signal handlers. False on timeout.
template <typename Pred>
bool wait_released(Pred done, std::optional<double> timeout_s) {
  const auto start = Clock::now();
  for (;;) {
    bool ok = false;
    {
      py::gil_scoped_release nogil;
      auto nap = std::chrono::microseconds(5);
      const auto slice_end = Clock::now() + std::chrono::milliseconds(50);
      for (int spin = 0; !(ok = done()) && Clock::now() < slice_end; ++spin) {
        if (spin < 200) continue;
        std::this_thread::sleep_for(nap);
        nap = std::min(nap * 2, std::chrono::microseconds(100));
      }
    }
    if (ok) return true;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (timeout_s && std::chrono::duration<double>(Clock::now() - start).count() >= *timeout_s)
      return false;
  }
}

// What is left of `timeout_s` since `start` (never negative); nullopt waits forever.
std::optional<double> remaining(std::optional<double> timeout_s, Clock::time_point start) {
  if (!timeout_s) return std::nullopt;
  return std::max(0.0, *timeout_s - std::chrono::duration<double>(Clock::now() - start).count());
}

// JSON numbers have no nan or inf.
std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char b[320];  // DBL_MAX has 309 digits
  std::snprintf(b, sizeof b, "%.0f", v);
  return b;
}

// One trace: a JSON Lines file, one line per finished dispatch. Each line goes to the kernel by a
// single write(2) on an O_APPEND descriptor and nothing is buffered in this process, so the file
// only ever grows by whole lines (stdio's buffer cut lines at 4 KiB and held the tail until exit),
// what is written is visible to every reader at once, and it stays when the process dies.
// Linux copies a write page by page and stops between two pages for a fatal signal: a SIGKILL
// landing inside the copy of a line that straddles a page boundary is the one way a line can
// still be cut (the file then ends at that boundary); a write per line keeps that window to the
// last line of ~300 bytes. Padding lines to avoid straddles would put blank lines in every trace.
class TraceFile {
 public:
  TraceFile(std::string path, bool append) : path_(std::move(path)) {
    const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (append ? 0 : O_TRUNC);
    fd_ = ::open(path_.c_str(), flags, 0644);
    if (fd_ < 0)
      throw py::value_error("cannot write the trace " + path_ + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
      id_ = {st.st_dev, st.st_ino};
      // A file that does not end in a newline (not a trace, or cut by a writer that died
      // mid-line): start on a line of our own rather than extend its last one.
      if (append && st.st_size > 0 && !ends_in_newline(st.st_size)) write_all("\n");
    }
  }
  ~TraceFile() { ::close(fd_); }
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;

  const std::string& path() const { return path_; }
  // The regular file this trace writes ({0, 0} for a device or a pipe such as /dev/null).
  std::pair<dev_t, ino_t> file_id() const { return id_; }
  uint64_t lines() const { return lines_.load(); }
  uint64_t pending() const { return pending_.load(); }

  void submitted() { ++pending_; }
  void dropped() { --pending_; }

  void write_line(const std::string& line) {
    std::lock_guard lk(mu_);
    --pending_;
    if (error_) return;
    if (write_all(line)) ++lines_;
  }

  // The first write error, as an exception (a full disk, say): told at the trace's end rather
  // than from inside whichever dispatch happened to write the line.
  void raise_if_failed() const {
    std::lock_guard lk(mu_);
    if (error_) {
      errno = error_;
      PyErr_SetFromErrnoWithFilename(PyExc_OSError, path_.c_str());
      throw py::error_already_set();
    }
  }

 private:
  bool ends_in_newline(off_t size) const {
    const int rd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (rd < 0) return true;  // cannot tell: leave the file as it is
    char last = '\n';
    (void)::pread(rd, &last, 1, size - 1);
    ::close(rd);
    return last == '\n';
  }

  bool write_all(const std::string& s) {
    std::size_t off = 0;
    while (off < s.size()) {
      const ssize_t n = ::write(fd_, s.data() + off, s.size() - off);
      if (n < 0) {
        if (errno == EINTR) continue;
        error_ = errno;
        return false;
      }
      off += static_cast<std::size_t>(n);
    }
    return true;
  }

  std::string path_;
  int fd_ = -1;
  std::pair<dev_t, ino_t> id_{0, 0};
  std::atomic<uint64_t> lines_{0}, pending_{0};
  mutable std::mutex mu_;
  int error_ = 0;
};

// One traced dispatch, written to its trace once finished. It keeps the trace that was open when
// it was submitted: a dispatch of one torch_mode block never lands in the next block's file.
struct Pending {
  std::string name;
  Dim3 grid, workgroup;
  double flops, bytes;
  int64_t submit_ns;  // simulated clock
  std::unique_ptr<simrt::Signal> signal;
  std::shared_ptr<TraceFile> trace;
  uint64_t seq;  // its place among the queue's traced dispatches
  gpu::KernelKind kind = gpu::KernelKind::kGeneric;  // its register model, for the replay
};

std::string trace_line(uint32_t queue_id, const Pending& p) {
  std::string name;
  for (char c : p.name) {
    if (c == '"' || c == '\\') name += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) name += c;
  }
  std::string line(160 + name.size(), '\0');
  for (;;) {
    const int n = std::snprintf(
        line.data(), line.size(),
        "{\"pid\": %d, \"queue_id\": %u, \"name\": \"%s\", \"grid\": [%u, %u, %u], "
        "\"workgroup\": [%u, %u, %u], \"kind\": \"%s\", \"flops\": %s, \"bytes\": %s, "
        "\"submit_us\": %.3f, \"start_us\": %.3f, \"end_us\": %.3f}\n",
        static_cast<int>(getpid()), queue_id, name.c_str(), p.grid[0], p.grid[1], p.grid[2],
        p.workgroup[0], p.workgroup[1], p.workgroup[2], gpu::to_string(p.kind),
        json_number(p.flops).c_str(),
        json_number(p.bytes).c_str(), static_cast<double>(p.submit_ns) / 1e3,
        static_cast<double>(p.signal->start_ts()) / 1e3,
        static_cast<double>(p.signal->end_ts()) / 1e3);
    if (n >= 0 && static_cast<std::size_t>(n) < line.size()) {
      line.resize(static_cast<std::size_t>(n));
      return line;
    }
    line.assign(n < 0 ? line.size() * 2 : static_cast<std::size_t>(n) + 1, '\0');
  }
}

// Waits for one traced dispatch of a queue: done once its signal reached 0 or the queue's reaper
// passed it (after which the signal may already serve another dispatch). It holds no pointer to
// the queue, which another thread may destroy while this one waits without the GIL.
struct DispatchWaiter {
  std::shared_ptr<const std::atomic<uint64_t>> reaped;
  uint64_t seq;
  simrt::Signal* signal;
  bool wait(std::optional<double> timeout_s) const {
    return wait_released([&] { return reaped->load() > seq || signal->load() == 0; }, timeout_s);
  }
};

class HwQueue;

class Device : public std::enable_shared_from_this<Device> {
 public:
  // The runtime is never closed: its queues would be destroyed, and a KFD DESTROY_QUEUE blocks
  // while the queue is suspended — a model suspended from outside could then never exit. The
  // KFD removes a process's queues when it exits, as it does for a HIP program
  // (docs/kfd-interface.md#session-lifetime).
  ~Device() { (void)rt_.release(); }

  Device() {
    if (auto why = unavailable_reason(); !why.empty()) raise_runtime(why);
    try {
      rt_ = std::make_unique<simrt::Runtime>();
    } catch (const simrt::Error& e) {
      raise_runtime(std::string("gpreempt.sim: cannot open the simulated GPU: ") + e.what());
    }
    profile_ = machine_profile(rt_->node_properties());
    epoch_ns_ = simulated_epoch();
  }

  simrt::Runtime& rt() { return *rt_; }
  const gpu::GpuProfile& profile() const { return profile_; }
  int64_t now_ns() const { return host_ns() - epoch_ns_; }

  // Opens `path` as the trace of every dispatch from now on and returns it (None: no trace).
  // A new trace starts the file afresh unless `append`. The file of a trace this process still
  // writes (the current one, an enclosing block's, or one with dispatches not yet finished) is
  // refused without `append`, which then shares that trace: truncating it would cut the lines
  // written so far and interleave the old trace's last lines with the new one's.
  std::shared_ptr<TraceFile> trace_to(const std::optional<std::string>& path, bool append) {
    std::lock_guard lk(trace_mu_);
    if (!path) {
      trace_.reset();
      return nullptr;
    }
    struct stat st {};
    if (::stat(path->c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      for (auto it = open_.begin(); it != open_.end();) {
        auto t = it->lock();
        if (!t) {
          it = open_.erase(it);
          continue;
        }
        const bool live = t == trace_ || t->pending() > 0;
        if (live && t->file_id() == std::pair<dev_t, ino_t>{st.st_dev, st.st_ino}) {
          if (!append)
            throw py::value_error(
                "the trace " + *path + " is still being written by this process (" +
                (t == trace_ ? std::string("it is the current trace: an enclosing torch_mode "
                                           "block's, or Device.trace_to's")
                             : std::to_string(t->pending()) + " of its dispatches have not "
                                                              "finished yet") +
                "); starting it afresh would cut its lines: pass append=True to add to it, or "
                "name another file");
          trace_ = t;
          return t;
        }
        ++it;
      }
    }
    auto t = std::make_shared<TraceFile>(*path, append);
    open_.push_back(t);
    trace_ = t;
    return t;
  }
  std::shared_ptr<TraceFile> trace() {
    std::lock_guard lk(trace_mu_);
    return trace_;
  }
  void set_trace(std::shared_ptr<TraceFile> t) {
    std::lock_guard lk(trace_mu_);
    trace_ = std::move(t);
  }
  bool tracing() {
    std::lock_guard lk(trace_mu_);
    return trace_ != nullptr;
  }

  // Waits until every dispatch of `t` has finished and its line is in the file.
  bool finish_trace(const std::shared_ptr<TraceFile>& t, std::optional<double> timeout_s);

  void add_queue(HwQueue* q) { queues_.push_back(q); }
  void remove_queue(HwQueue* q) { std::erase(queues_, q); }

  std::unique_ptr<simrt::Signal> take_signal() {
    std::lock_guard lk(trace_mu_);
    if (free_signals_.empty()) return std::make_unique<simrt::Signal>(1);
    auto s = std::move(free_signals_.back());
    free_signals_.pop_back();
    s->store(1);
    return s;
  }
  void give_signal(std::unique_ptr<simrt::Signal> s) {
    std::lock_guard lk(trace_mu_);
    free_signals_.push_back(std::move(s));
  }

 private:
  std::unique_ptr<simrt::Runtime> rt_;
  gpu::GpuProfile profile_;
  int64_t epoch_ns_ = 0;
  std::mutex trace_mu_;
  std::shared_ptr<TraceFile> trace_;
  std::vector<std::weak_ptr<TraceFile>> open_;
  std::vector<HwQueue*> queues_;  // touched with the GIL held only
  std::vector<std::unique_ptr<simrt::Signal>> free_signals_;
};

class Signal {
 public:
  explicit Signal(int64_t v) : s_(std::make_unique<simrt::Signal>(v)) {}
  simrt::Signal* get() { return s_.get(); }
  int64_t value() const { return s_->load(); }
  void store(int64_t v) { s_->store(v); }
  bool wait(int64_t v, std::optional<double> timeout_s) {
    return wait_released([&] { return s_->load() == v; }, timeout_s);
  }
  uint64_t start_ns() const { return s_->start_ts(); }
  uint64_t end_ns() const { return s_->end_ts(); }

 private:
  std::unique_ptr<simrt::Signal> s_;
};

class HwQueue {
 public:
  HwQueue(std::shared_ptr<Device> dev, uint32_t priority, uint32_t ring_packets)
      : dev_(std::move(dev)) {
    try {
      q_ = dev_->rt().create_queue(priority, ring_packets);
    } catch (const simrt::Error& e) {
      if (e.code() == EINVAL) throw py::value_error(e.what());
      raise_runtime(std::string("gpreempt.sim: ") + e.what());
    }
    dev_->add_queue(this);
  }

  // Same reason as ~Device: only an explicit destroy() talks to the KFD.
  // Signals of unfinished dispatches stay too: the simulated CP may still write them.
  ~HwQueue() {
    dev_->remove_queue(this);
    (void)q_.release();
    for (auto& p : pending_) {
      (void)p.signal.release();
      p.trace->dropped();
    }
  }

  uint32_t id() const { return q_->id(); }
  uint32_t priority() const { return q_->priority(); }
  uint64_t ring_packets() const { return q_->ring_packets(); }
  uint64_t hwq_address() const { return q_->hwq_address(); }
  uint64_t write_index() const { return q_->write_index(); }
  uint64_t read_index() const { return q_->read_index(); }

  // Room for one more packet; with a full ring the host waits for the GPU, as HIP does.
  void make_room() {
    reap();
    if (q_->write_index() - q_->read_index() < q_->ring_packets()) return;
    wait_released([&] { return q_->write_index() - q_->read_index() < q_->ring_packets(); },
                  std::nullopt);
  }

  void submit(const std::string& name, Dim3 grid, Dim3 wg, uint64_t wg_cost_ns, Signal* signal,
              double flops, double bytes, gpu::KernelKind kind = gpu::KernelKind::kGeneric) {
    make_room();
    simrt::Kernel k;
    k.name = name;
    k.kind = static_cast<uint8_t>(kind);
    k.grid = grid;
    for (int d = 0; d < 3; ++d) {
      if (wg[d] > UINT16_MAX) throw py::value_error("workgroup dimensions must be at most 65535");
      k.workgroup[d] = static_cast<uint16_t>(wg[d]);
    }
    k.wg_cost_ns = std::max<uint64_t>(wg_cost_ns, 1);
    auto trace = signal ? nullptr : dev_->trace();
    if (!trace) {
      q_->dispatch(k, signal ? signal->get() : nullptr);
      return;
    }
    Pending p{name, grid, wg, flops, bytes, dev_->now_ns(), dev_->take_signal(), trace,
              traced_++, kind};
    q_->dispatch(k, p.signal.get());
    trace->submitted();
    pending_.push_back(std::move(p));
  }

  // A dispatch priced by the roofline: returns the modelled busy time (ns).
  int64_t dispatch_op(const std::string& name, const std::vector<uint64_t>& grid,
                      const std::vector<uint64_t>& wg, double flops, double bytes,
                      const std::string& math, bool matrix) {
    // Matrix-core operators (GEMM, convolution) get the register model of a library GEMM tile,
    // the rest that of an elementwise/reduction kernel (docs/sim-model.md §5).
    const gpu::KernelKind kind = matrix ? gpu::KernelKind::kMatrix : gpu::KernelKind::kVector;
    gpu::KernelShape ks{dim3(grid, "grid"), dim3(wg, "workgroup"), gpu::resources_for(kind)};
    const auto& p = dev_->profile();
    const gpu::SimTime busy = gpu::roofline_ns(p, ks, flops, bytes, math_type(math), matrix);
    submit(name, ks.grid, ks.workgroup, static_cast<uint64_t>(gpu::wg_cost_for(p, ks, busy)),
           nullptr, flops, bytes, kind);
    return busy;
  }

  void dispatch(const std::string& name, const std::vector<uint64_t>& grid,
                const std::vector<uint64_t>& wg, std::optional<double> cost_us,
                std::optional<uint64_t> wg_cost_ns, Signal* signal) {
    gpu::KernelShape ks{dim3(grid, "grid"), dim3(wg, "workgroup")};
    if (cost_us.has_value() == wg_cost_ns.has_value())
      throw py::value_error("give exactly one of cost_us (the whole dispatch) and wg_cost_ns");
    uint64_t per_wg = 0;
    if (cost_us) {
      if (!(*cost_us > 0)) throw py::value_error("cost_us must be positive");
      per_wg = static_cast<uint64_t>(gpu::wg_cost_for(
          dev_->profile(), ks, static_cast<gpu::SimTime>(std::llround(*cost_us * 1e3))));
    } else {
      per_wg = *wg_cost_ns;
    }
    submit(name, ks.grid, ks.workgroup, per_wg, signal, 0, 0);
  }

  void barrier_and(const std::vector<Signal*>& deps, Signal* done) {
    if (deps.size() > 5) throw py::value_error("a barrier-AND packet takes at most 5 signals");
    make_room();
    std::vector<simrt::Signal*> d;
    for (auto* s : deps) d.push_back(s ? s->get() : nullptr);
    q_->barrier_and(d, done ? done->get() : nullptr);
  }

  // Writes the trace lines of finished dispatches (in queue order: the queue runs in order).
  void reap() {
    while (!pending_.empty() && pending_.front().signal->load() == 0) {
      Pending p = std::move(pending_.front());
      pending_.pop_front();
      p.trace->write_line(trace_line(q_->id(), p));
      reaped_->fetch_add(1);
      dev_->give_signal(std::move(p.signal));
    }
  }

  bool idle() const { return q_->read_index() == q_->write_index(); }

  // A waiter for the last traced dispatch (of `t`, or of any trace), if one is not yet written.
  std::optional<DispatchWaiter> last_pending(const TraceFile* t = nullptr) const {
    for (auto it = pending_.rbegin(); it != pending_.rend(); ++it)
      if (!t || it->trace.get() == t) return DispatchWaiter{reaped_, it->seq, it->signal.get()};
    return std::nullopt;
  }

  // An idle queue may still owe its last completion signal (the CP publishes the read index
  // first), so the wait ends on that signal too: every traced line is written on return.
  bool synchronize(std::optional<double> timeout_s) {
    const auto start = Clock::now();
    bool ok = wait_released([&] { return idle(); }, timeout_s);
    if (auto w = last_pending(); ok && w) ok = w->wait(remaining(timeout_s, start));
    reap();
    return ok;
  }

  // For the end of a process: wait while the queue moves, give up once it stood still for
  // `stall_s` (suspended from outside, say) so that exit never hangs.
  bool drain(double stall_s) {
    uint64_t last = q_->read_index();
    auto moved = Clock::now();
    for (;;) {
      if (wait_released([&] { return idle() || q_->read_index() != last; }, 0.05)) {
        if (idle()) break;
        last = q_->read_index();
        moved = Clock::now();
        continue;
      }
      if (std::chrono::duration<double>(Clock::now() - moved).count() >= stall_s) break;
    }
    if (auto w = last_pending(); idle() && w) (void)w->wait(stall_s);
    reap();
    return idle();
  }

  void destroy() {
    py::gil_scoped_release nogil;
    q_->destroy();
  }

 private:
  std::shared_ptr<Device> dev_;
  std::unique_ptr<simrt::Queue> q_;
  std::deque<Pending> pending_;
  uint64_t traced_ = 0;  // traced dispatches submitted
  // Traced dispatches written (shared with waiters that must not hold the queue).
  std::shared_ptr<std::atomic<uint64_t>> reaped_ = std::make_shared<std::atomic<uint64_t>>(0);
};

bool Device::finish_trace(const std::shared_ptr<TraceFile>& t, std::optional<double> timeout_s) {
  const auto start = Clock::now();
  // One queue at a time, looked up afresh after each wait: the waits release the GIL, and
  // another thread may create or destroy queues meanwhile.
  for (;;) {
    std::optional<DispatchWaiter> w;
    for (HwQueue* q : queues_) {
      q->reap();
      if ((w = q->last_pending(t.get()))) break;
    }
    if (!w) break;
    if (!w->wait(remaining(timeout_s, start))) return false;
  }
  t->raise_if_failed();
  return true;
}

}  // namespace

void register_sim(py::module_& parent) {
  auto m = parent.def_submodule(
      "sim", "simrt on the simulated GPU: queues, dispatches, barrier-AND packets, signals.");

  m.def("unavailable_reason", &unavailable_reason,
        "Why this process cannot use the simulated GPU ('' when it can).");

  py::class_<Device, std::shared_ptr<Device>>(m, "Device",
                                              "This process's simrt runtime on the simulated GPU.")
      .def(py::init<>())
      .def_property_readonly("gpu_id", [](Device& d) { return d.rt().gpu_id(); })
      .def_property_readonly("kfd_version", [](Device& d) {
        return py::make_tuple(d.rt().kfd_major(), d.rt().kfd_minor());
      })
      .def_property_readonly("profile", [](Device& d) {
        const auto& p = d.profile();
        py::dict r;
        r["name"] = p.name;
        r["num_xcc"] = p.num_xcc;
        r["cus"] = p.total_cus();
        r["simds_per_cu"] = p.simds_per_cu;
        r["wave_size"] = p.wave_size;
        r["clock_mhz"] = p.clock_mhz;
        r["packet_overhead_ns"] = p.packet_overhead_ns;
        r["hbm_bandwidth_gbps"] = p.hbm_bandwidth_gbps;
        r["math_efficiency"] = p.math_efficiency;
        r["hbm_efficiency"] = p.hbm_efficiency;
        py::dict rates;
        for (const char* t : {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"}) {
          rates[py::str(std::string("matrix_") + t)] =
              gpu::flops_per_clk_cu(p, math_type(t), true);
          rates[py::str(std::string("vector_") + t)] =
              gpu::flops_per_clk_cu(p, math_type(t), false);
        }
        r["flops_per_clk_cu"] = rates;
        return r;
      })
      .def("now_us", [](Device& d) { return static_cast<double>(d.now_ns()) / 1e3; },
           "The simulated GPU clock (µs since the simulated machine started), as trace times.")
      .def(
          "roofline_us",
          [](Device& d, double flops, double bytes, const std::string& math, bool matrix,
             const std::vector<uint64_t>& grid, const std::vector<uint64_t>& wg) {
            gpu::KernelShape ks{dim3(grid, "grid"), dim3(wg, "workgroup")};
            return static_cast<double>(
                       gpu::roofline_ns(d.profile(), ks, flops, bytes, math_type(math), matrix)) /
                   1e3;
          },
          py::arg("flops"), py::arg("bytes"), py::arg("math") = "fp32", py::arg("matrix") = false,
          py::arg("grid") = std::vector<uint64_t>{1u << 20},
          py::arg("workgroup") = std::vector<uint64_t>{256},
          "Busy time (µs) the roofline gives a kernel, without the CP's packet overhead.")
      .def(
          "create_queue",
          [](std::shared_ptr<Device> d, uint32_t priority, uint32_t ring_packets) {
            return std::make_unique<HwQueue>(std::move(d), priority, ring_packets);
          },
          py::arg("priority") = 7, py::arg("ring_packets") = 4096,
          "KFD CREATE_QUEUE: an AQL queue of `ring_packets` (power of two >= 16), priority 0..15.")
      .def("trace_to", &Device::trace_to, py::arg("path"), py::arg("append") = false,
           "Open `path` as the trace of every dispatch from now on (None: stop tracing) and "
           "return it. One JSON line per finished dispatch, each written whole; the file starts "
           "afresh unless `append`. A file this process is still tracing into is refused "
           "without `append` (which then shares that trace).")
      .def_property("trace", &Device::trace, &Device::set_trace,
                    "The trace new dispatches go to (None: untraced); set it to restore one.")
      .def("finish_trace", &Device::finish_trace, py::arg("trace"),
           py::arg("timeout") = py::none(),
           "Wait until every dispatch of `trace` has finished and its line is in the file; "
           "False after `timeout` seconds. Raises OSError if a line could not be written.")
      .def_property_readonly("tracing", &Device::tracing);

  py::class_<TraceFile, std::shared_ptr<TraceFile>>(
      m, "Trace", "A JSON Lines trace file that dispatches write into (Device.trace_to).")
      .def_property_readonly("path", &TraceFile::path)
      .def_property_readonly("lines", &TraceFile::lines, "Lines written so far.")
      .def_property_readonly("pending", &TraceFile::pending,
                             "Dispatches submitted whose line is not yet written.")
      .def("__repr__", [](const TraceFile& t) {
        return "<gpreempt.sim.Trace " + t.path() + ": " + std::to_string(t.lines()) +
               " lines, " + std::to_string(t.pending()) + " pending>";
      });

  py::class_<Signal>(m, "Signal", "An amd_signal_t in this process; the simulated CP decrements it.")
      .def(py::init<int64_t>(), py::arg("initial") = 1)
      .def_property_readonly("value", &Signal::value)
      .def("store", &Signal::store)
      .def("wait", &Signal::wait, py::arg("value") = 0, py::arg("timeout") = py::none(),
           "Wait until the value equals `value`; False after `timeout` seconds.")
      .def_property_readonly("start_ns", &Signal::start_ns)
      .def_property_readonly("end_ns", &Signal::end_ns);

  py::class_<HwQueue>(m, "Queue", "A KFD compute queue of this process (AQL ring).")
      .def_property_readonly("queue_id", &HwQueue::id)
      .def_property_readonly("priority", &HwQueue::priority)
      .def_property_readonly("ring_packets", &HwQueue::ring_packets)
      .def_property_readonly("hwq_address", &HwQueue::hwq_address)
      .def_property_readonly("write_index", &HwQueue::write_index)
      .def_property_readonly("read_index", &HwQueue::read_index)
      .def("dispatch", &HwQueue::dispatch, py::arg("name"), py::arg("grid"),
           py::arg("workgroup") = std::vector<uint64_t>{256}, py::kw_only(),
           py::arg("cost_us") = py::none(), py::arg("wg_cost_ns") = py::none(),
           py::arg("signal") = nullptr,
           "Kernel dispatch packet (barrier bit set). cost_us: the whole kernel alone on the "
           "device, without the CP's packet overhead; or wg_cost_ns per workgroup.")
      .def("dispatch_op", &HwQueue::dispatch_op, py::arg("name"), py::arg("grid"),
           py::arg("workgroup"), py::arg("flops"), py::arg("bytes"), py::arg("math") = "fp32",
           py::arg("matrix") = false,
           "A dispatch priced by the roofline; returns its busy time in ns.")
      .def("barrier_and", &HwQueue::barrier_and, py::arg("deps"), py::arg("signal") = nullptr,
           "Barrier-AND packet on up to 5 signals.")
      .def("synchronize", &HwQueue::synchronize, py::arg("timeout") = py::none(),
           "Wait until the GPU has finished everything queued; False after `timeout` seconds.")
      .def("drain", &HwQueue::drain, py::arg("stall") = 0.5,
           "Wait while the queue makes progress; give up after `stall` seconds without any.")
      .def("idle", &HwQueue::idle)
      .def("destroy", &HwQueue::destroy,
           "KFD DESTROY_QUEUE (blocks while the queue is suspended, as the kernel does).");
}

}  // namespace gpreempt::pysim
