// gpreempt.Client: a connection to gpreemptd (lib/client/connection.h) for Python. Calls wait for
// the daemon without the GIL; a mutex per client serialises the threads sharing one (the module's
// default client is shared by every thread of the process). The context manager and decorator
// (`gpreempt.online_request`) are in gpreempt/__init__.py, on top of begin()/end().
#include "client.h"

#include <pybind11/stl.h>

#include <chrono>
#include <cerrno>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "client/connection.h"
#include "common/error.h"

namespace py = pybind11;

namespace gpreempt::python {

namespace {

using client::Connection;

constexpr uint64_t kAutoIdBit = uint64_t{1} << 63;

struct PyClient {
  std::mutex mu;
  std::optional<Connection> connection;
  uint64_t next_auto_id = 1;

  // Runs `fn(connection)` under the mutex without the GIL.
  template <class F>
  auto with(F&& fn) {
    py::gil_scoped_release unlocked;
    std::lock_guard lock(mu);
    if (!connection) throw Error(ENOTCONN, "the gpreempt Client is closed");
    return fn(*connection);
  }
};

py::object to_python(const nlohmann::ordered_json& j) {
  return py::module_::import("json").attr("loads")(j.dump());
}

client::Target target_of(std::optional<std::string> class_name, std::optional<int> pid,
                         std::optional<uint32_t> gpu_id) {
  client::Target t;
  t.class_name = std::move(class_name);
  t.pid = pid;
  t.gpu_id = gpu_id;
  return t;
}

}  // namespace

void register_client(py::module_& m) {
  py::class_<PyClient>(m, "Client",
                       "A connection to gpreemptd (docs/protocol.md). Use as a context manager, or\n"
                       "close() it; the daemon ends the requests a closed client had begun.")
      .def(py::init([](std::optional<std::string> socket, uint32_t timeout_ms,
                       std::optional<std::string> hint_replies) {
             if (timeout_ms == 0) throw Error(EINVAL, "timeout_ms must be positive");
             std::optional<Connection::HintReplies> mode;
             if (hint_replies) {
               if (*hint_replies == "deferred") mode = Connection::HintReplies::kDeferred;
               else if (*hint_replies == "wait") mode = Connection::HintReplies::kWait;
               else
                 throw Error(EINVAL, "hint_replies='" + *hint_replies +
                                         "': expected 'wait' or 'deferred'");
             }
             auto c = std::make_unique<PyClient>();
             py::gil_scoped_release unlocked;
             c->connection.emplace(
                 Connection::connect(socket.value_or(""), std::chrono::milliseconds(timeout_ms)));
             if (mode) c->connection->set_hint_replies(*mode);
             return c;
           }),
           py::arg("socket") = py::none(),
           py::arg("timeout_ms") = static_cast<uint32_t>(client::kDefaultCallTimeout.count()),
           py::arg("hint_replies") = py::none(),
           "Connect to gpreemptd at `socket` (None: $GPREEMPT_SOCKET, else\n"
           "/run/gpreempt/gpreemptd.sock). `timeout_ms` bounds the connect and each call.\n"
           "`hint_replies`: 'wait' (each begin/end/expect returns once the daemon answered) or\n"
           "'deferred' (it returns once sent; a refusal is raised by a later call, or flush());\n"
           "None: $GPREEMPT_HINT_REPLIES, else 'wait'.\n"
           "Raises Error: ENOENT/ECONNREFUSED when nothing serves the socket (the message names\n"
           "it), ETIMEDOUT, EINVAL for an unknown hint_replies.")
      .def_property_readonly(
          "hint_replies",
          [](PyClient& c) {
            py::gil_scoped_release unlocked;
            std::lock_guard lock(c.mu);
            return c.connection && c.connection->hint_replies() == Connection::HintReplies::kDeferred
                       ? std::string("deferred")
                       : std::string("wait");
          },
          "'wait' or 'deferred' (see the constructor).")
      .def(
          "flush", [](PyClient& c) { c.with([](Connection& conn) { conn.flush(); }); },
          "Wait for the replies of deferred hints; raises the first refusal among them.")
      .def_property_readonly(
          "socket",
          [](PyClient& c) {
            // Another thread may hold the mutex while it waits for the daemon: wait without the
            // GIL, which that thread (or an in-process server) may need to finish.
            py::gil_scoped_release unlocked;
            std::lock_guard lock(c.mu);
            return c.connection ? c.connection->path() : std::string();
          },
          "The socket path this client connected to.")
      .def_property_readonly(
          "connected",
          [](PyClient& c) {
            py::gil_scoped_release unlocked;
            std::lock_guard lock(c.mu);
            return c.connection && c.connection->connected();
          },
          "False once closed, or after a timeout or a broken reply (connect again).")
      .def(
          "hello",
          [](PyClient& c) {
            auto info = c.with([](Connection& conn) { return conn.hello(); });
            return to_python(info.raw);
          },
          "What the daemon says about this process: {'daemon_version', 'protocol', 'pid',\n"
          "'class' (str or None), 'may_preempt' (whether its hints act), 'reason' (why not)}.")
      .def(
          "begin",
          [](PyClient& c, std::optional<uint64_t> request_id) {
            if (request_id && (*request_id == 0 || (*request_id & kAutoIdBit))) {
              throw Error(EINVAL, "request ids are 1 .. 2**63-1 (bit 63 marks the ids the client chooses)");
            }
            return c.with([&](Connection& conn) {
              const uint64_t id = request_id.value_or(kAutoIdBit | c.next_auto_id++);
              conn.begin(id);
              return id;
            });
          },
          py::arg("request_id") = py::none(),
          "Hint: a request starts now. Returns its id (chosen by the client when None). Raises\n"
          "Error EPERM when this process's class may not preempt (the message says why).")
      .def(
          "end",
          [](PyClient& c, uint64_t request_id) {
            c.with([&](Connection& conn) { conn.end(request_id); });
          },
          py::arg("request_id"), "Hint: request `request_id` finished.")
      .def(
          "expect",
          [](PyClient& c, int64_t in_us) { c.with([&](Connection& conn) { conn.expect(in_us); }); },
          py::arg("in_us"), "Early hint: a request will start in about `in_us` microseconds.")
      .def(
          "status",
          [](PyClient& c) {
            auto doc = c.with([](Connection& conn) { return conn.status(); });
            return to_python(doc);
          },
          "The daemon's status document (what `gpreempt ctl status --json` prints).")
      .def(
          "suspend",
          [](PyClient& c, int64_t for_ms, std::optional<std::string> class_name,
             std::optional<int> pid, std::optional<uint32_t> gpu_id) {
            auto t = target_of(std::move(class_name), pid, gpu_id);
            auto r = c.with([&](Connection& conn) { return conn.suspend(t, for_ms); });
            return to_python(r);
          },
          py::arg("for_ms"), py::kw_only(), py::arg("class_name") = py::none(),
          py::arg("pid") = py::none(), py::arg("gpu_id") = py::none(),
          "Operator: suspend a class or a process (exactly one) for `for_ms` ms, optionally on\n"
          "one GPU. Needs control permission (root or the configured group): else Error EPERM.")
      .def(
          "resume",
          [](PyClient& c, std::optional<std::string> class_name, std::optional<int> pid,
             std::optional<uint32_t> gpu_id) {
            auto t = target_of(std::move(class_name), pid, gpu_id);
            auto r = c.with([&](Connection& conn) { return conn.resume(t); });
            return to_python(r);
          },
          py::kw_only(), py::arg("class_name") = py::none(), py::arg("pid") = py::none(),
          py::arg("gpu_id") = py::none(), "Operator: end an operator suspension now.")
      .def(
          "reload", [](PyClient& c) { return to_python(c.with([](Connection& conn) { return conn.reload(); })); },
          "Operator: make the daemon re-read its config file (as SIGHUP).")
      .def(
          "close",
          [](PyClient& c) {
            py::gil_scoped_release unlocked;
            std::lock_guard lock(c.mu);
            c.connection.reset();
          },
          "Close the connection (idempotent).")
      .def("__enter__", [](PyClient& c) -> PyClient& { return c; })
      .def("__exit__", [](PyClient& c, py::object, py::object, py::object) {
        py::gil_scoped_release unlocked;
        std::lock_guard lock(c.mu);
        c.connection.reset();
        return false;
      });
}

}  // namespace gpreempt::python
