// gpreempt.Client: a client of gpreemptd (lib/client/hint_client.h: its hints fail open unless
// require_daemon) for Python. Calls wait for the daemon without the GIL; a mutex per client
// serialises the threads sharing one (the module's default client is shared by every thread of the
// process). The client's warnings (protection lost, back, the first refusal) go to the
// "gpreempt" logger once the call is done, with the GIL. The context manager and decorator
// (`gpreempt.online_request`) are in gpreempt/__init__.py, on top of begin()/end().
#include "client.h"

#include <pybind11/stl.h>

#include <chrono>
#include <cerrno>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "client/connection.h"
#include "client/hint_client.h"
#include "common/error.h"

namespace py = pybind11;

namespace gpreempt::python {

namespace {

using client::Connection;
using client::HintClient;

constexpr uint64_t kAutoIdBit = uint64_t{1} << 63;

struct PyClient {
  std::mutex mu;
  std::optional<HintClient> hints;
  uint64_t next_auto_id = 1;
  std::vector<std::string> warnings;  // filled under `mu`, logged by log_warnings()

  // Runs `fn(hints)` under the mutex without the GIL, then logs what it warned.
  template <class F>
  auto with(F&& fn) {
    struct LogAfter {
      PyClient& c;
      ~LogAfter() {
        // Also while an exception unwinds: a logging failure must not replace it.
        try {
          c.log_warnings();
        } catch (...) {
        }
      }
    } log_after{*this};
    py::gil_scoped_release unlocked;
    std::lock_guard lock(mu);
    if (!hints) throw Error(ENOTCONN, "the gpreempt Client is closed");
    return fn(*hints);
  }

  // Reads the client's state: `fn(hints or nullptr once closed)` under the mutex without the GIL
  // (another thread may hold the mutex while it waits for the daemon, or for an in-process server
  // that needs the GIL).
  template <class F>
  auto peek(F&& fn) {
    py::gil_scoped_release unlocked;
    std::lock_guard lock(mu);
    return fn(hints ? &*hints : nullptr);
  }

  void close() {
    py::gil_scoped_release unlocked;
    std::lock_guard lock(mu);
    hints.reset();
  }

  // With the GIL, not holding `mu`.
  void log_warnings() {
    std::vector<std::string> lines;
    {
      py::gil_scoped_release unlocked;
      std::lock_guard lock(mu);
      lines.swap(warnings);
    }
    if (lines.empty()) return;
    auto logger = py::module_::import("logging").attr("getLogger")("gpreempt");
    for (const auto& line : lines) logger.attr("warning")(line);
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
                       "A client of gpreemptd (docs/protocol.md); its hints fail open (see __init__).\n"
                       "Use as a context manager, or close() it; the daemon ends the requests a\n"
                       "closed client had begun.")
      .def(py::init([](std::optional<std::string> socket, uint32_t timeout_ms,
                       std::optional<std::string> hint_replies, bool require_daemon) {
             if (timeout_ms == 0) throw Error(EINVAL, "timeout_ms must be positive");
             client::HintClientOptions o;
             if (hint_replies) {
               if (*hint_replies == "deferred") o.hint_replies = Connection::HintReplies::kDeferred;
               else if (*hint_replies == "wait") o.hint_replies = Connection::HintReplies::kWait;
               else
                 throw Error(EINVAL, "hint_replies='" + *hint_replies +
                                         "': expected 'wait' or 'deferred'");
             }
             o.path = socket.value_or("");
             o.timeout = std::chrono::milliseconds(timeout_ms);
             o.require_daemon = require_daemon;
             auto c = std::make_unique<PyClient>();
             PyClient* raw = c.get();
             // Called under raw->mu (every HintClient call is).
             o.warn = [raw](const std::string& line) { raw->warnings.push_back(line); };
             {
               py::gil_scoped_release unlocked;
               c->hints.emplace(std::move(o));
             }
             c->log_warnings();
             return c;
           }),
           py::arg("socket") = py::none(),
           py::arg("timeout_ms") = static_cast<uint32_t>(client::kDefaultCallTimeout.count()),
           py::arg("hint_replies") = py::none(), py::kw_only(), py::arg("require_daemon") = false,
           "A client of gpreemptd at `socket` (None: $GPREEMPT_SOCKET, else\n"
           "/run/gpreempt/gpreemptd.sock). `timeout_ms` bounds a connect and each call.\n"
           "`hint_replies`: 'wait' (each begin/end/expect returns once the daemon answered) or\n"
           "'deferred' (it returns once sent); None: $GPREEMPT_HINT_REPLIES, else 'wait'.\n"
           "Hints fail open: with no daemon, or when it goes away, restarts or refuses, begin/end/\n"
           "expect return normally and the request runs unprotected; the 'gpreempt' logger warns\n"
           "once when protection is lost and once when it is back; stats() counts. The client\n"
           "reconnects on later hints without waiting (one non-blocking connect per backoff\n"
           "interval, 50 ms doubling to 2 s). `require_daemon=True` fails closed instead: the\n"
           "constructor raises Error ENOENT/ECONNREFUSED/ETIMEDOUT when nothing serves the socket,\n"
           "and every hint raises the daemon's refusal or the connection's error.\n"
           "hello(), status() and the operator calls connect if needed and raise in every mode.\n"
           "Raises Error EINVAL for an unknown hint_replies.")
      .def_property_readonly(
          "require_daemon",
          [](PyClient& c) {
            return c.peek([](HintClient* h) { return h != nullptr && h->require_daemon(); });
          },
          "True: hints raise instead of failing open (see the constructor).")
      .def(
          "stats",
          [](PyClient& c) {
            const auto s =
                c.peek([](HintClient* h) { return h ? h->stats() : client::HintStats{}; });
            py::dict d;
            d["requests_protected"] = s.requests_protected;
            d["requests_unprotected"] = s.requests_unprotected;
            d["requests_open"] = s.requests_open;
            d["reconnects"] = s.reconnects;
            d["connected"] = s.connected;
            return d;
          },
          "What this client's hints achieved, asking nothing of the daemon:\n"
          "{'requests_protected': begins the daemon took, 'requests_unprotected': begins that\n"
          "ran without it (away, or it refused), 'requests_open': begun and not ended,\n"
          "'reconnects': connections made after being without one, 'connected': bool}.")
      .def_property_readonly(
          "hint_replies",
          [](PyClient& c) {
            return c.peek([](HintClient* h) {
              return h && h->hint_replies() == Connection::HintReplies::kDeferred
                         ? std::string("deferred")
                         : std::string("wait");
            });
          },
          "'wait' or 'deferred' (see the constructor).")
      .def(
          "flush",
          [](PyClient& c) {
            c.with([](HintClient& h) {
              if (h.connected()) h.call([](Connection& conn) { conn.flush(); });
            });
          },
          "Wait for the replies of deferred hints; raises the first refusal among them.")
      .def_property_readonly(
          "socket",
          [](PyClient& c) {
            return c.peek([](HintClient* h) { return h ? h->path() : std::string(); });
          },
          "The socket path of this client's daemon.")
      .def_property_readonly(
          "connected",
          [](PyClient& c) { return c.peek([](HintClient* h) { return h != nullptr && h->connected(); }); },
          "Whether the client holds a connection to gpreemptd now (False once closed, while the\n"
          "daemon is away, and after a timeout or a broken reply until the next call reconnects).")
      .def(
          "hello",
          [](PyClient& c) {
            auto info = c.with([](HintClient& h) { return h.call([](Connection& conn) { return conn.hello(); }); });
            return to_python(info.raw);
          },
          "What the daemon says about this process: {'daemon_version', 'protocol', 'pid',\n"
          "'class' (str or None), 'may_preempt' (whether its hints act), 'reason' (why not)}.")
      .def(
          "begin",
          [](PyClient& c, std::optional<uint64_t> request_id, std::optional<bool> require_daemon) {
            if (request_id && (*request_id == 0 || (*request_id & kAutoIdBit))) {
              throw Error(EINVAL, "request ids are 1 .. 2**63-1 (bit 63 marks the ids the client chooses)");
            }
            return c.with([&](HintClient& h) {
              const uint64_t id = request_id.value_or(kAutoIdBit | c.next_auto_id++);
              h.begin(id, require_daemon);
              return id;
            });
          },
          py::arg("request_id") = py::none(), py::kw_only(), py::arg("require_daemon") = py::none(),
          "Hint: a request starts now. Returns its id (chosen by the client when None). Fails\n"
          "open (the request runs unprotected, counted in stats()) unless `require_daemon` (None:\n"
          "the client's setting) is true; then raises Error: EPERM when this process's class may\n"
          "not preempt (the message says why), or the connection's error.")
      .def(
          "end",
          [](PyClient& c, uint64_t request_id, std::optional<uint64_t> tokens) {
            if (tokens && *tokens == 0) throw Error(EINVAL, "tokens must be positive (or None)");
            c.with([&](HintClient& h) { h.end(request_id, tokens.value_or(0)); });
          },
          py::arg("request_id"), py::kw_only(), py::arg("tokens") = py::none(),
          "Hint: request `request_id` finished (sent only when it was begun on the current\n"
          "connection: a restarted daemon never saw the others). `tokens`: an LLM request's\n"
          "output tokens, for its time per output token (TPOT).")
      .def(
          "token",
          [](PyClient& c, uint64_t request_id, uint64_t tokens) {
            c.with([&](HintClient& h) { h.token(request_id, tokens); });
          },
          py::arg("request_id"), py::arg("tokens") = 1,
          "Hint: LLM request `request_id` has produced `tokens` output tokens so far (1: its\n"
          "first token, for its time to first token, TTFT; later counts tell its decode pace).\n"
          "Sent only when the request was begun on the current connection; fails open as end.")
      .def(
          "expect",
          [](PyClient& c, int64_t in_us) { c.with([&](HintClient& h) { h.expect(in_us); }); },
          py::arg("in_us"),
          "Early hint: a request will start in about `in_us` microseconds (fails open as begin).")
      .def(
          "status",
          [](PyClient& c) {
            auto doc = c.with([](HintClient& h) { return h.call([](Connection& conn) { return conn.status(); }); });
            return to_python(doc);
          },
          "The daemon's status document (what `gpreempt ctl status --json` prints).")
      .def(
          "suspend",
          [](PyClient& c, int64_t for_ms, std::optional<std::string> class_name,
             std::optional<int> pid, std::optional<uint32_t> gpu_id) {
            auto t = target_of(std::move(class_name), pid, gpu_id);
            auto r = c.with([&](HintClient& h) {
              return h.call([&](Connection& conn) { return conn.suspend(t, for_ms); });
            });
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
            auto r = c.with([&](HintClient& h) {
              return h.call([&](Connection& conn) { return conn.resume(t); });
            });
            return to_python(r);
          },
          py::kw_only(), py::arg("class_name") = py::none(), py::arg("pid") = py::none(),
          py::arg("gpu_id") = py::none(), "Operator: end an operator suspension now.")
      .def(
          "reload",
          [](PyClient& c) {
            return to_python(c.with([](HintClient& h) {
              return h.call([](Connection& conn) { return conn.reload(); });
            }));
          },
          "Operator: make the daemon re-read its config file (as SIGHUP).")
      .def("close", &PyClient::close,
           "Close the connection (idempotent); the daemon ends the requests it had begun.")
      .def("__enter__", [](PyClient& c) -> PyClient& { return c; })
      .def("__exit__", [](PyClient& c, py::object, py::object, py::object) {
        c.close();
        return false;
      });
}

}  // namespace gpreempt::python
