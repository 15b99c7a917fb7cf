// gpreempt._gpreempt: the C++ core (lib/preempt) as Python classes. Blocking calls release the
// GIL (they wait for the control thread, which may wait for the kernel); errors raise
// gpreempt.Error, an OSError whose errno is the code and whose strerror is the detail message.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cerrno>
#include <memory>
#include <mutex>

#include "client.h"
#include "common/error.h"
#include "gpreempt/kfd_abi.h"
#include "gpreempt/version.h"
#include "inspect.h"
#include "kfd/grace.h"
#include "discovery/process_discovery.h"
#include "discovery/topology.h"
#include "preempt/context.h"
#include "sim.h"

namespace py = pybind11;
using gpreempt::Error;
namespace preempt = gpreempt::preempt;
namespace kfd = gpreempt::kfd;
namespace discovery = gpreempt::discovery;

namespace {

PyObject* g_error_type = nullptr;

// The context as Python sees it: close() may happen while Target objects still exist.
struct ContextState {
  std::mutex mu;
  std::shared_ptr<preempt::Context> ctx;
  std::shared_ptr<preempt::Context> get() {
    std::lock_guard lock(mu);
    if (!ctx) throw Error(EBADF, "the gpreempt Context is closed");
    return ctx;
  }
};

struct ContextHandle {
  std::shared_ptr<ContextState> state = std::make_shared<ContextState>();
};

struct TargetHandle {
  std::shared_ptr<ContextState> state;
  int pid = 0;
  bool attached = true;
};

struct BatchView {
  long count = 0;
  std::vector<std::pair<uint32_t, std::string>> queues;
  bool all_done = true;
  double hop_us = 0, ioctl_us = 0, total_us = 0;
};

BatchView to_py(const preempt::BatchOutcome& o) {
  BatchView b;
  b.count = o.result.count;
  for (const auto& q : o.result.queues)
    b.queues.emplace_back(q.queue_id, kfd::outcome_name(q.outcome));
  b.all_done = o.result.all_done();
  b.hop_us = o.timing.hop_ns / 1000.0;
  b.ioctl_us = o.timing.ioctl_ns / 1000.0;
  b.total_us = o.timing.total_ns / 1000.0;
  return b;
}

std::optional<std::vector<uint32_t>> ids_arg(const std::optional<std::vector<uint32_t>>& ids) {
  return ids;
}

}  // namespace

PYBIND11_MODULE(_gpreempt, m) {
  m.doc() = "Suspend and resume the KFD compute queues of AMD GPU processes (native part).";

  g_error_type = PyErr_NewExceptionWithDoc(
      "gpreempt.Error",
      "A gpreempt operation failed. `errno` is the error code (e.g. errno.EPERM), `strerror` the\n"
      "detail message saying what failed and what to do.",
      PyExc_OSError, nullptr);
  m.attr("Error") = py::handle(g_error_type);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      py::object args = py::make_tuple(e.code(), std::string(e.what()));
      PyErr_SetObject(g_error_type, args.ptr());
    }
  });

  m.attr("GRACE_DEFAULT") = kfd::KFD_USE_DEFAULT_GRACE_PERIOD;
  m.attr("__version__") = GPREEMPT_VERSION_STRING;

  py::class_<kfd::QueueInfo>(m, "Queue", "One queue of a target, from the KFD queue snapshot.")
      .def_readonly("queue_id", &kfd::QueueInfo::queue_id, "Per-process queue id")
      .def_readonly("gpu_id", &kfd::QueueInfo::gpu_id, "KFD topology gpu_id")
      .def_readonly("type", &kfd::QueueInfo::queue_type,
                    "uapi queue type: 0 compute, 1 SDMA, 2 compute AQL, 3 SDMA XGMI")
      .def_readonly("ring_size", &kfd::QueueInfo::ring_size, "Ring size in bytes")
      .def_readonly("ring_base_address", &kfd::QueueInfo::ring_base_address)
      .def_readonly("read_pointer_address", &kfd::QueueInfo::read_pointer_address)
      .def_readonly("write_pointer_address", &kfd::QueueInfo::write_pointer_address)
      .def_readonly("ctx_save_restore_address", &kfd::QueueInfo::ctx_save_restore_address)
      .def_readonly("ctx_save_restore_size", &kfd::QueueInfo::ctx_save_restore_size)
      .def_readonly("exception_status", &kfd::QueueInfo::exception_status,
                    "KFD exception bits as snapshotted (bit 30 set: the queue was new)")
      .def("__repr__", [](const kfd::QueueInfo& q) {
        return "Queue(queue_id=" + std::to_string(q.queue_id) + ", gpu_id=" +
               std::to_string(q.gpu_id) + ", type=" + std::to_string(q.queue_type) +
               ", ring_size=" + std::to_string(q.ring_size) + ")";
      });

  py::class_<discovery::SysfsQueue>(m, "SysfsQueue", "A queue as per-process sysfs shows it.")
      .def_readonly("queue_id", &discovery::SysfsQueue::queue_id)
      .def_readonly("gpu_id", &discovery::SysfsQueue::gpu_id)
      .def_readonly("type", &discovery::SysfsQueue::type,
                    "kernel-internal type: 0 compute, 1 SDMA, 2 HIQ, 3 SDMA XGMI")
      .def_readonly("ring_size", &discovery::SysfsQueue::size)
      .def("__repr__", [](const discovery::SysfsQueue& q) {
        return "SysfsQueue(queue_id=" + std::to_string(q.queue_id) + ", gpu_id=" +
               std::to_string(q.gpu_id) + ", type=" + std::to_string(q.type) + ")";
      });

  py::class_<BatchView>(m, "BatchResult", "Outcome of one suspend or resume call.")
      .def_readonly("count", &BatchView::count, "Queues now suspended (resp. running)")
      .def_readonly("queues", &BatchView::queues,
                    "[(queue_id, 'ok' | 'invalid' | 'error')] in request order")
      .def_readonly("all_done", &BatchView::all_done, "Every requested queue succeeded")
      .def_readonly("hop_us", &BatchView::hop_us, "Hand-off to the control thread (us)")
      .def_readonly("ioctl_us", &BatchView::ioctl_us, "The SUSPEND/RESUME ioctl alone (us)")
      .def_readonly("total_us", &BatchView::total_us, "The whole call as the caller saw it (us)")
      .def("__repr__", [](const BatchView& b) {
        return "BatchResult(count=" + std::to_string(b.count) + ", requested=" +
               std::to_string(b.queues.size()) + ", all_done=" + (b.all_done ? "True" : "False") +
               ")";
      });

  py::class_<TargetHandle>(m, "Target",
                       "A process attached to a Context (ptrace-seized, KFD debug session).\n"
                       "Use as a context manager to detach on exit.")
      .def_readonly("pid", &TargetHandle::pid)
      .def(
          "queues",
          [](TargetHandle& t) {
            auto ctx = t.state->get();
            std::vector<kfd::QueueInfo> out;
            for (auto& q : ctx->queues(t.pid)) out.push_back(q.info);
            return out;
          },
          py::call_guard<py::gil_scoped_release>(),
          "Fresh snapshot of the target's queues, newest first. Taking it makes newly created\n"
          "queues suspendable.")
      .def(
          "suspend",
          [](TargetHandle& t, std::optional<std::vector<uint32_t>> ids, uint32_t grace) {
            return to_py(t.state->get()->suspend(t.pid, ids_arg(ids), grace));
          },
          py::arg("ids") = py::none(), py::arg("grace") = kfd::KFD_USE_DEFAULT_GRACE_PERIOD,
          py::call_guard<py::gil_scoped_release>(),
          "Suspend `ids` (None: every queue). `grace` is in the kernel's unit, 1,000 GPU clocks\n"
          "(see grace_from_us); GRACE_DEFAULT keeps the driver default. Returns a BatchResult;\n"
          "check all_done — queues that could not be suspended are listed, never hidden.")
      .def(
          "resume",
          [](TargetHandle& t, std::optional<std::vector<uint32_t>> ids) {
            return to_py(t.state->get()->resume(t.pid, ids_arg(ids)));
          },
          py::arg("ids") = py::none(), py::call_guard<py::gil_scoped_release>(),
          "Resume `ids` (None: every queue). If the kernel call fails the debug session is\n"
          "disabled instead (which resumes every queue) and Error(EIO) is raised saying so.")
      .def(
          "detach",
          [](TargetHandle& t) {
            if (!t.attached) return;
            t.attached = false;
            auto ctx = t.state->get();
            try {
              ctx->detach(t.pid);
            } catch (const Error& e) {
              if (e.code() != ENOENT) throw;  // already forgotten: the process exited
            }
          },
          py::call_guard<py::gil_scoped_release>(),
          "Resume what this context suspended, end the debug session and ptrace-detach. "
          "Idempotent.")
      .def("__enter__", [](TargetHandle& t) -> TargetHandle& { return t; })
      .def("__exit__", [](TargetHandle& t, py::object, py::object, py::object) {
        py::gil_scoped_release release;
        if (!t.attached) return false;
        t.attached = false;
        try {
          t.state->get()->detach(t.pid);
        } catch (const Error& e) {
          if (e.code() != ENOENT && e.code() != EBADF) throw;
        }
        return false;
      });

  py::class_<ContextHandle>(m, "Context",
                        "One /dev/kfd and one control thread; attach target processes to it.\n"
                        "Use as a context manager (closes on exit: every target is resumed and "
                        "detached).")
      .def(py::init([](const std::string& device_path, uint32_t watchdog_ms, bool handle_signals) {
             preempt::ContextOptions o;
             o.device_path = device_path;
             o.watchdog_bound = std::chrono::milliseconds(watchdog_ms);
             o.handle_signals = handle_signals;
             auto c = std::make_unique<ContextHandle>();
             py::gil_scoped_release release;
             c->state->ctx = std::make_shared<preempt::Context>(o);
             return c;
           }),
           py::arg("device_path") = "/dev/kfd",
           py::arg("watchdog_ms") = static_cast<uint32_t>(preempt::kDefaultWatchdogBound.count()),
           py::arg("handle_signals") = false,
           "Open the KFD device and check its version ([1.13, 2.0)). `watchdog_ms` bounds every\n"
           "suspension (0: no watchdog, as in the C ABI and the CLI; default 30000). `handle_signals` installs SIGINT/SIGTERM/SIGHUP handlers\n"
           "that resume targets first; off by default because Python handles SIGINT itself —\n"
           "use `with` blocks so KeyboardInterrupt resumes through __exit__.")
      .def_property_readonly(
          "kfd_version",
          [](ContextHandle& c) {
            auto v = c.state->get()->kfd_version();
            return py::make_tuple(v.major, v.minor);
          },
          "(major, minor) of the KFD ioctl interface")
      .def(
          "attach",
          [](ContextHandle& c, int pid) {
            auto ctx = c.state->get();
            {
              py::gil_scoped_release release;
              ctx->attach(pid);
            }
            auto t = std::make_unique<TargetHandle>();
            t->state = c.state;
            t->pid = pid;
            return t;
          },
          py::arg("pid"),
          "PTRACE_SEIZE the process's main thread from the control thread, enable a KFD debug\n"
          "session, snapshot its queues. Raises Error: ESRCH gone, EBUSY already traced (the\n"
          "message names the tracer), EPERM not permitted, EALREADY another debugger.")
      .def(
          "stats",
          [](ContextHandle& c) {
            auto s = c.state->get()->stats();
            py::dict d;
            d["suspend_calls"] = s.suspend_calls;
            d["resume_calls"] = s.resume_calls;
            d["watchdog_resumes"] = s.watchdog_resumes;
            d["forced_disables"] = s.forced_disables;
            d["signals_handled"] = s.signals_handled;
            d["control_calls"] = s.hop.calls;
            d["last_hop_us"] = s.hop.last_hop_ns / 1000.0;
            d["max_hop_us"] = s.hop.max_hop_ns / 1000.0;
            d["watchdog_ms"] = c.state->get()->watchdog_bound().count();
            return d;
          },
          "Counters and control-thread hop timings.")
      .def(
          "take_notices",
          [](ContextHandle& c) {
            std::vector<std::pair<int, std::string>> out;
            for (auto& n : c.state->get()->take_notices()) out.emplace_back(n.pid, n.message);
            return out;
          },
          "[(pid, message)] of what the context did on its own (watchdog, target exits, ...).")
      .def(
          "close",
          [](ContextHandle& c) {
            std::shared_ptr<preempt::Context> ctx;
            {
              std::lock_guard lock(c.state->mu);
              ctx.swap(c.state->ctx);
            }
            py::gil_scoped_release release;
            ctx.reset();
          },
          "Resume and detach every target, stop the control thread, close /dev/kfd. Idempotent.")
      .def("__enter__", [](ContextHandle& c) -> ContextHandle& { return c; })
      .def("__exit__", [](ContextHandle& c, py::object, py::object, py::object) {
        std::shared_ptr<preempt::Context> ctx;
        {
          std::lock_guard lock(c.state->mu);
          ctx.swap(c.state->ctx);
        }
        py::gil_scoped_release release;
        ctx.reset();
        return false;
      });

  m.def(
      "find_queues_by_process",
      [](int pid) { return discovery::read_process_queues(pid); }, py::arg("pid"),
      "Queues of any process from per-process sysfs: no Context, no root, no ptrace.");
  m.def(
      "my_queues", [] { return discovery::read_process_queues(static_cast<int>(::getpid())); },
      "This process's own queues (per-process sysfs).");
  m.def(
      "grace_from_us", &kfd::grace_units_from_us, py::arg("us"), py::arg("clock_mhz"),
      "Microseconds → the kernel's grace unit (1,000 GPU clocks) at `clock_mhz`: "
      "ceil(us*MHz/1000), at least 1. clock_mhz 0 → GRACE_DEFAULT.");
  m.def(
      "gpu_clock_mhz",
      [](uint32_t gpu_id) {
        auto gpu = discovery::find_gpu(discovery::read_gpu_nodes(), gpu_id);
        if (!gpu) throw Error(ENODEV, "no GPU with gpu_id " + std::to_string(gpu_id));
        return gpu->max_engine_clk_fcompute;
      },
      py::arg("gpu_id"), "Max compute clock (MHz) of a GPU from the KFD topology.");

  gpreempt::python::register_inspect(m);
  gpreempt::python::register_client(m);
  gpreempt::pysim::register_sim(m);
}
