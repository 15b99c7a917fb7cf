// `gpreempt map`: one row per KFD queue joining per-process sysfs, debugfs mqds/hqds/rls and HIP
// log HWq addresses on MQD base, ring base and read-pointer address
// (docs/kfd-interface.md#joining-queues-across-sources).
#include <cerrno>
#include <iostream>
#include <utility>

#include "cli.h"
#include "cli_common.h"
#include "common/text_file.h"
#include "discovery/json.h"
#include "discovery/process_discovery.h"
#include "logs/hip_log_analyzer.h"
#include "target_check.h"

namespace gpreempt::cli {

namespace {

struct MapOptions {
  std::optional<int> pid;
  std::string mqds, hqds, rls, log;
  bool offline = false;
  std::string debugfs = "/sys/kernel/debug/kfd";
  std::string sysfs = "/sys/class/kfd/kfd";
};

// Explicit file: must be readable and of the right kind. Live default: used when readable,
// otherwise noted. Streamed through `decode` in bounded memory.
template <class Decode>
auto load(const std::string& explicit_path, const std::string& live_path, bool offline,
          std::vector<std::string>& notes, Decode decode) -> std::optional<decltype(decode(std::declval<LineSource&>(), std::string()))> {
  const std::string& path = explicit_path.empty() ? live_path : explicit_path;
  if (explicit_path.empty() && offline) return std::nullopt;
  InputFile in(path);
  if (const auto& e = in.error()) {
    if (!explicit_path.empty()) throw Failure(e->message());
    notes.push_back(path + " not read (" + e->reason + (e->error == EACCES ? "; debugfs needs root" : "") + ")");
    return std::nullopt;
  }
  FileLines lines(in);
  auto result = decode(lines, path);
  if (const auto& e = in.error()) throw Failure(e->message());
  if (result.looks_like) throw Failure(path + ": " + result.diagnostics.front().message);
  return result;
}

std::string slots_text(const discovery::QueueMapRow& r) {
  std::string s;
  for (const auto& h : r.hw_slots) {
    if (!s.empty()) s += " ";
    s += std::to_string(h.xcc) + ":" + std::to_string(h.pipe) + "." + std::to_string(h.queue) + (h.active ? "" : "(idle)");
  }
  return s.empty() ? "-" : s;
}

void run_map(const Globals& g, const MapOptions& o) {
  std::vector<std::string> notes;
  std::vector<discovery::Diagnostic> diags;
  bool complete = true;
  discovery::QueueMapInputs in;
  in.pid = o.pid;
  if (o.pid && !o.offline) {
    discovery::SystemRoots live;
    live.kfd_sysfs = o.sysfs;
    require_gpu_queues(*o.pid, live);
  }

  std::optional<discovery::MqdsDump> mqds;
  std::optional<discovery::HqdsDump> hqds;
  std::optional<discovery::RlsDump> rls;
  mqds = load(o.mqds, o.debugfs + "/mqds", o.offline, notes,
              [](LineSource& l, const std::string& n) { return discovery::decode_mqds(l, n); });
  if (mqds) {
    in.mqds = &*mqds;
    complete &= mqds->complete;
    diags.insert(diags.end(), mqds->diagnostics.begin(), mqds->diagnostics.end());
  }
  hqds = load(o.hqds, o.debugfs + "/hqds", o.offline, notes,
              [](LineSource& l, const std::string& n) { return discovery::decode_hqds(l, n); });
  if (hqds) {
    in.hqds = &*hqds;
    complete &= hqds->complete;
    diags.insert(diags.end(), hqds->diagnostics.begin(), hqds->diagnostics.end());
  }
  rls = load(o.rls, o.debugfs + "/rls", o.offline, notes,
             [](LineSource& l, const std::string& n) { return discovery::decode_rls(l, n); });
  if (rls) {
    in.rls = &*rls;
    complete &= rls->complete;
    diags.insert(diags.end(), rls->diagnostics.begin(), rls->diagnostics.end());
  }
  if (!o.offline) {
    discovery::SystemRoots roots;
    roots.kfd_sysfs = o.sysfs;
    for (int pid : discovery::kfd_sysfs_processes(roots)) {
      if (o.pid && pid != *o.pid) continue;
      std::vector<std::string> problems;
      for (auto& q : discovery::sysfs_queues(roots, pid, &problems)) in.known.push_back(std::move(q));
      notes.insert(notes.end(), problems.begin(), problems.end());
    }
  }
  if (!o.log.empty()) {
    InputFile f(o.log);
    logs::LogAnalyzer a;
    std::vector<char> buf(1u << 20);
    while (const std::size_t n = f.read(buf.data(), buf.size())) a.feed(std::string_view(buf.data(), n));
    if (const auto& e = f.error()) throw Failure(e->message());
    for (const auto& q : a.finish().hw_queues) in.log_queues.push_back({q.address, q.pid});
  }
  if (!in.mqds && !in.hqds && in.known.empty())
    throw Failure("no queue source readable: give --mqds/--hqds files, or run as root for debugfs (" +
                  o.debugfs + "), or check " + o.sysfs);

  auto map = discovery::build_queue_map(in);
  map.notes.insert(map.notes.begin(), notes.begin(), notes.end());
  auto j = discovery::to_json(map);
  j["complete"] = complete;
  nlohmann::ordered_json dj = nlohmann::ordered_json::array();
  for (const auto& d : diags) dj.push_back(discovery::to_json(d));
  j["diagnostics"] = dj;
  if (g.json) {
    print_json(j);
  } else {
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : map.queues) {
      std::string hwq;
      for (auto a : r.hwq) hwq += (hwq.empty() ? "" : ",") + hex(a);
      rows.push_back({r.pid ? std::to_string(*r.pid) : "?",
                      r.queue_id ? std::to_string(*r.queue_id) + (r.queue_id_inferred ? "*" : "") : "?",
                      gpu_id_text(r.gpu_id), r.type, r.ring_base ? hex(*r.ring_base) : "-",
                      r.rptr_address ? hex(*r.rptr_address) : "-",
                      r.pipe_priority ? std::to_string(*r.pipe_priority) + "/" + std::to_string(*r.queue_priority) : "-",
                      slots_text(r), hwq.empty() ? "-" : hwq});
    }
    std::cout << table({"PID", "QID", "GPU", "TYPE", "RING_BASE", "RPTR_ADDR", "PIPE/QUEUE_PRIO",
                        "HW_SLOTS(xcc:pipe.queue)", "HWQ"},
                       rows);
    bool inferred = false;
    for (const auto& r : map.queues) inferred |= r.queue_id_inferred;
    if (inferred) std::cout << "* queue id inferred (creation order in debugfs), not read from KFD\n";
    for (const auto& n : map.notes) std::cout << "note: " << n << "\n";
  }
  std::cout.flush();
  for (const auto& d : diags) std::cerr << "gpreempt: " << d.to_string() << "\n";
  if (!complete)
    exit_partial("map built from incomplete input: " + std::to_string(discovery::problem_count(diags)) +
                 " problem(s), see above");
}

}  // namespace

void register_map_commands(CLI::App& app, Globals& globals) {
  auto o = std::make_shared<MapOptions>();
  CLI::App* map = add_command(
      app, globals, "map", "One row per KFD queue: ids, ring/rptr addresses, hardware slots, HWq",
      "Joins per-process sysfs queue ids, debugfs mqds/hqds/rls (live by default; root) and HIP log\n"
      "HWq addresses on MQD base, ring base and read-pointer address (HWq + 0x80). Queue ids are per\n"
      "process: identify a queue by (pid, queue id) or (gpu, ring base). Without sysfs ids the id is\n"
      "inferred from creation order in mqds and marked with '*' (queue_id_inferred in JSON).\n"
      "Examples:\n  sudo gpreempt map --pid 4242\n"
      "  gpreempt map --offline --mqds mqds.txt --hqds hqds.txt --log app.log --json\n"
      "Exit codes: 0 ok, 1 no readable source / unreadable file / incomplete input, 2 usage.");
  map->add_option("--pid", o->pid, "Only this process's queues (live: it must have queues)")
      ->check(cli_common::at_least(1));
  map->add_option("--mqds", o->mqds, "Saved debugfs mqds instead of the live one");
  map->add_option("--hqds", o->hqds, "Saved debugfs hqds instead of the live one");
  map->add_option("--rls", o->rls, "Saved debugfs rls instead of the live one");
  map->add_option("--log", o->log, "HIP runtime log (AMD_LOG_LEVEL>=3) whose HWq addresses to join");
  map->add_flag("--offline", o->offline, "Read only the files given, no live debugfs/sysfs");
  map->add_option("--debugfs", o->debugfs, "KFD debugfs directory")->capture_default_str();
  map->add_option("--sysfs", o->sysfs, "KFD sysfs directory (holds proc/)")->capture_default_str();
  map->callback([&globals, o] { run_map(globals, *o); });
}

}  // namespace gpreempt::cli
