// gpreempt.decode / analyze_log / queue_map: the documents of lib/capi/inspect_documents.h (the
// CLI's --json) as Python dicts. Parsing runs without the GIL; the dict is built by json.loads so
// it is exactly the JSON the C ABI and the CLI return.
#include "inspect.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "inspect_documents.h"

namespace py = pybind11;

namespace gpreempt::python {

namespace {

template <class F>
py::object document(F&& build) {
  std::string text;
  {
    py::gil_scoped_release unlocked;
    text = build().json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  }
  return py::module_::import("json").attr("loads")(text);
}

}  // namespace

void register_inspect(py::module_& m) {
  m.def(
      "decode",
      [](const std::string& kind, const std::string& text, const std::string& name) {
        return document([&] { return inspect::decode(kind, text, name); });
      },
      py::arg("kind"), py::arg("text"), py::arg("name") = "<string>",
      "Decode a KFD text format: kind 'properties', 'mqds', 'hqds' or 'rls'; `text` is the file's\n"
      "contents (str or bytes). Returns the dict `gpreempt decode KIND FILE --json` prints.\n"
      "Malformed or truncated text gives the partial result with complete=False and\n"
      "'diagnostics' naming `name` and the line. Unknown kind: gpreempt.Error (EINVAL).");
  m.def(
      "analyze_log",
      [](const std::string& text, std::optional<int> pid, const std::string& name) {
        return document([&] { return inspect::analyze_log(text, name, pid); });
      },
      py::arg("text"), py::arg("pid") = py::none(), py::arg("name") = "<string>",
      "Analyze a HIP runtime log (AMD_LOG_LEVEL 1-5): the dict `gpreempt log analyze FILE --json`\n"
      "prints: {\"schema_version\", \"files\": [one entry: file, hw_queues, dispatches, barriers,\n"
      "kernels, errors, ...]}. pid: keep only that\n"
      "process's records (records without a pid are kept).");
  m.def(
      "queue_map",
      [](std::optional<std::string> mqds, std::optional<std::string> hqds, std::optional<std::string> rls,
         std::optional<std::string> log, std::optional<int> pid) {
        return document([&] {
          inspect::MapTexts t;
          if (mqds) t.mqds = *mqds;
          if (hqds) t.hqds = *hqds;
          if (rls) t.rls = *rls;
          if (log) t.log = *log;
          t.pid = pid;
          return inspect::queue_map(t);
        });
      },
      py::arg("mqds") = py::none(), py::arg("hqds") = py::none(), py::arg("rls") = py::none(),
      py::arg("log") = py::none(), py::arg("pid") = py::none(),
      "One row per KFD queue from saved debugfs texts (mqds and/or hqds required; rls and a HIP\n"
      "log add to the rows): the dict `gpreempt map --offline ... --json` prints. complete=False\n"
      "when any dump was cut short (see 'diagnostics').");
}

}  // namespace gpreempt::python
