#include "logs/json.h"
#include "logs/log_notes.h"

#include "common/json_conventions.h"
#include "common/hex.h"

namespace gpreempt::logs {

using nlohmann::ordered_json;

namespace {
using json_conventions::address;
template <class C>
ordered_json hex_list(const C& c) {
  ordered_json a = ordered_json::array();
  for (auto v : c) a.push_back(address(v));
  return a;
}
template <class T>
ordered_json opt(const std::optional<T>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}
}  // namespace

ordered_json to_json(const LogSummary& s) {
  ordered_json procs = ordered_json::array();
  for (const auto& p : s.processes) procs.push_back({{"pid", opt(p.pid)}, {"tids", p.tids}});
  ordered_json queues = ordered_json::array();
  for (const auto& q : s.hw_queues) {
    queues.push_back({{"hwq", address(q.address)},
                      {"pid", opt(q.pid)},
                      {"sw_queues", hex_list(q.sw_queues)},
                      {"size_packets", opt(q.size)},
                      {"priority", opt(q.priority)},
                      {"cooperative", opt(q.cooperative)},
                      {"created_line", opt(q.created_line)},
                      {"ids", q.ids},
                      {"acquired", q.acquired},
                      {"released", q.released},
                      {"deleted", q.deleted},
                      {"dispatches", q.dispatches},
                      {"barriers", q.barriers}});
  }
  ordered_json kernels = ordered_json::object();
  for (const auto& [k, n] : s.kernels) kernels[k] = n;
  ordered_json errors = ordered_json::array();
  for (const auto& e : s.errors) errors.push_back({{"line", e.line}, {"text", e.text}});
  ordered_json levels = ordered_json::object();
  for (const auto& [l, n] : s.levels) levels[std::to_string(l)] = n;
  return {{"lines", s.lines},
          {"records", s.records},
          {"recognized", s.recognized},
          {"levels", levels},
          {"processes", procs},
          {"hw_queues", queues},
          {"dispatches", s.dispatches},
          {"barriers", s.barriers},
          {"kernels", kernels},
          {"errors", errors},
          {"errors_total", s.errors_total},
          {"truncated_record", s.truncated_record}};
}

ordered_json file_json(std::string_view name, const LogSummary& s, std::optional<int> pid) {
  ordered_json j = {{"file", std::string(name)}};
  j.update(to_json(s));
  j["notes"] = notes_for(s, pid).text;
  return j;
}

ordered_json to_json(const LogComparison& c) {
  ordered_json kernels = ordered_json::array();
  for (const auto& k : c.kernels) kernels.push_back({{"name", k.name}, {"a", k.a}, {"b", k.b}});
  return {{"hw_queues", {{"a", c.hw_queues_a}, {"b", c.hw_queues_b},
                         {"only_a", hex_list(c.hwq_only_a)}, {"only_b", hex_list(c.hwq_only_b)},
                         {"common", hex_list(c.hwq_common)}}},
          {"dispatches", {{"a", c.dispatches_a}, {"b", c.dispatches_b}}},
          {"barriers", {{"a", c.barriers_a}, {"b", c.barriers_b}}},
          {"errors", {{"a", c.errors_a}, {"b", c.errors_b}}},
          {"priorities", {{"a", c.priorities_a}, {"b", c.priorities_b}}},
          {"kernels", kernels}};
}

ordered_json to_json(const QueueConfig& c) {
  ordered_json queues = ordered_json::array();
  for (const auto& q : c.queues)
    queues.push_back({{"hwq", address(q.hwq)},
                      {"rptr_address", address(q.rptr_address)},
                      {"ids", q.ids},
                      {"sw_queues", hex_list(q.sw_queues)},
                      {"priority", opt(q.priority)},
                      {"size_packets", opt(q.size)},
                      {"dispatches", q.dispatches}});
  return {{"pid", opt(c.pid)}, {"queues", queues}};
}

}  // namespace gpreempt::logs
