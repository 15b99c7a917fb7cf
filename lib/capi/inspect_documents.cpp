// Shared by the C ABI (capi_inspect.cpp) and the Python module: see inspect_documents.h. The
// queue-map document mirrors tools/gpreempt/cmd_map.cpp in its --offline form (no live sysfs).
#include "inspect_documents.h"

#include <cerrno>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/json_conventions.h"
#include "discovery/json.h"
#include "logs/json.h"
#include "logs/log_notes.h"

namespace gpreempt::inspect {

namespace {

template <class Dump>
Document document_of(const Dump& d) {
  return {json_conventions::document(discovery::to_json(d)), d.complete};
}

}  // namespace

Document decode(std::string_view kind, std::string_view text, std::string_view name) {
  if (kind == "properties") return document_of(discovery::decode_properties(text, name));
  if (kind == "mqds") return document_of(discovery::decode_mqds(text, name));
  if (kind == "hqds") return document_of(discovery::decode_hqds(text, name));
  if (kind == "rls") return document_of(discovery::decode_rls(text, name));
  throw Error(EINVAL, "unknown kind \"" + std::string(kind) +
                          "\": expected \"properties\", \"mqds\", \"hqds\" or \"rls\"");
}

Document analyze_log(std::string_view text, std::string_view name, std::optional<int> pid) {
  logs::AnalyzerOptions options;
  options.pid = pid;
  const logs::LogSummary s = logs::analyze_log(text, options);
  nlohmann::ordered_json doc = {{"files", nlohmann::ordered_json::array({logs::file_json(name, s, pid)})}};
  return {json_conventions::document(doc), !s.truncated_record};
}

Document queue_map(const MapTexts& t) {
  if (!t.mqds && !t.hqds)
    throw Error(EINVAL, "no queue source: give the mqds or the hqds text (rls and log only add to "
                        "the rows those provide)");
  discovery::QueueMapInputs in;
  in.pid = t.pid;
  std::vector<discovery::Diagnostic> diags;
  bool complete = true;
  auto note = [&](const auto& dump) {
    complete &= dump.complete;
    diags.insert(diags.end(), dump.diagnostics.begin(), dump.diagnostics.end());
  };
  std::optional<discovery::MqdsDump> mqds;
  std::optional<discovery::HqdsDump> hqds;
  std::optional<discovery::RlsDump> rls;
  if (t.mqds) {
    mqds = discovery::decode_mqds(*t.mqds, "<mqds>");
    in.mqds = &*mqds;
    note(*mqds);
  }
  if (t.hqds) {
    hqds = discovery::decode_hqds(*t.hqds, "<hqds>");
    in.hqds = &*hqds;
    note(*hqds);
  }
  if (t.rls) {
    rls = discovery::decode_rls(*t.rls, "<rls>");
    in.rls = &*rls;
    note(*rls);
  }
  if (t.log)
    for (const auto& q : logs::analyze_log(*t.log).hw_queues) in.log_queues.push_back({q.address, q.pid});

  nlohmann::ordered_json j = discovery::to_json(discovery::build_queue_map(in));
  j["complete"] = complete;
  nlohmann::ordered_json dj = nlohmann::ordered_json::array();
  for (const auto& d : diags) dj.push_back(discovery::to_json(d));
  j["diagnostics"] = std::move(dj);
  return {json_conventions::document(j), complete};
}

}  // namespace gpreempt::inspect
