// `gpreempt decode properties|mqds|hqds|rls FILE|-`: the KFD text formats (topology properties,
// debugfs mqds/hqds/rls) decoded into values, from live files or saved captures.
#include <cerrno>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "common/error.h"
#include "common/text_file.h"
#include "discovery/json.h"

namespace gpreempt::cli {

namespace {

using discovery::Diagnostic;

constexpr const char* kDebugfs = "/sys/kernel/debug/kfd/";

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

// Streams FILE ("-" = stdin) through `decode` in bounded memory. An input that cannot be read
// (missing, a directory, a FIFO, a read error half-way) or that is another kind of file fails
// with the path and the reason (exit 1) before anything is printed.
template <class Decode>
auto decode_file(const std::string& path, Decode decode) {
  // An errno travels with the message, so --json failure documents carry it (EIO, EISDIR, ...).
  // A refusal that is no errno (a FIFO, a device) is EINVAL, as for `log analyze`.
  auto fail = [](const FileError& e, const std::string& hint) {
    throw gpreempt::Error(e.error ? e.error : EINVAL, e.message() + hint);
  };
  InputFile in(path);
  if (const auto& e = in.error())
    fail(*e, e->error == EACCES && path.rfind(kDebugfs, 0) == 0 ? " (debugfs needs root)" : "");
  FileLines lines(in);
  auto result = decode(lines, display_name(path));
  if (const auto& e = in.error()) fail(*e, "");
  if (result.looks_like) throw Failure(display_name(path) + ": " + result.diagnostics.front().message);
  return result;
}

// Prints the document (human or --json), the diagnostics on stderr, and fails (exit 1) when the
// input was incomplete: the partial result is still printed.
void finish(const Globals& g, const std::string& human, const nlohmann::ordered_json& j,
            const std::vector<Diagnostic>& diags, bool complete, const std::string& what) {
  if (g.json)
    print_json(j);
  else
    std::cout << human;
  std::cout.flush();
  for (const auto& d : diags) std::cerr << "gpreempt: " << d.to_string() << "\n";
  if (!complete)
    exit_partial(what + " incomplete: " + std::to_string(discovery::problem_count(diags)) +
                 " problem(s), partial result printed");
}

void run_properties(const Globals& g, const std::string& file) {
  auto p = decode_file(file, [](LineSource& l, const std::string& n) { return discovery::decode_properties(l, n); });
  std::ostringstream out;
  out << (p.gpu ? "GPU node" : "CPU node");
  if (p.gfx_target) out << ", " << *p.gfx_target;
  if (p.compute_units) out << ", " << *p.compute_units << " compute units";
  if (p.num_xcc) out << ", " << *p.num_xcc << " XCC(s)";
  out << "\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& [k, v] : p.properties) rows.push_back({k, std::to_string(v)});
  out << table({"KEY", "VALUE"}, rows);
  finish(g, out.str(), discovery::to_json(p), p.diagnostics, p.complete, display_name(file));
}

void run_mqds(const Globals& g, const std::string& file) {
  auto m = decode_file(file, [](LineSource& l, const std::string& n) { return discovery::decode_mqds(l, n); });
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : m.processes)
    for (const auto& q : p.queues)
      for (const auto& c : q.xcc_copies) {
        if (c.sdma) {
          rows.push_back({std::to_string(p.pid), std::to_string(p.pasid), q.type, q.gpu_id_hex,
                          std::to_string(c.xcc), "-", "-", hex(c.sdma->ring_base),
                          hex(c.sdma->rptr_report_address), "-", c.complete ? "" : "INCOMPLETE"});
          continue;
        }
        const auto& d = c.compute;
        rows.push_back({std::to_string(p.pid), std::to_string(p.pasid), q.type, q.gpu_id_hex,
                        std::to_string(c.xcc), hex(d.mqd_base), d.active ? "yes" : "no", hex(d.ring_base),
                        hex(d.rptr_report_address),
                        std::to_string(d.pipe_priority) + "/" + std::to_string(d.queue_priority),
                        c.complete ? "" : "INCOMPLETE"});
      }
  std::string human = table({"PID", "PASID", "TYPE", "GPU", "XCC", "MQD_BASE", "ACTIVE", "RING_BASE",
                             "RPTR_ADDR", "PIPE/QUEUE_PRIO", ""},
                            rows);
  finish(g, human, discovery::to_json(m), m.diagnostics, m.complete, display_name(file));
}

void run_hqds(const Globals& g, const std::string& file) {
  auto h = decode_file(file, [](LineSource& l, const std::string& n) { return discovery::decode_hqds(l, n); });
  std::ostringstream out;
  for (const auto& n : h.nodes) {
    std::size_t active = 0, cp = 0;
    std::vector<std::vector<std::string>> rows;
    for (const auto& s : n.slots) {
      if (s.kind == "CP") ++cp;
      if (!s.active.value_or(false) || s.kind != "CP") continue;
      ++active;
      const auto& d = *s.decoded;
      rows.push_back({std::to_string(s.xcc), std::to_string(s.pipe), std::to_string(s.queue), hex(d.mqd_base),
                      std::to_string(d.vmid), hex(d.ring_base), hex(d.rptr_report_address),
                      std::to_string(d.rptr) + "/" + std::to_string(d.wptr),
                      std::to_string(d.pipe_priority) + "/" + std::to_string(d.queue_priority), hex(d.quantum)});
    }
    out << "Node " << n.node << ", gpu_id " << n.gpu_id_hex << ": ";
    if (n.stopped) {
      out << "device is stopped\n";
      continue;
    }
    out << active << " active of " << cp << " CP slots\n";
    if (!rows.empty())
      out << table({"XCC", "PIPE", "QUEUE", "MQD_BASE", "VMID", "RING_BASE", "RPTR_ADDR", "RPTR/WPTR",
                    "PIPE/QUEUE_PRIO", "QUANTUM"},
                   rows);
  }
  finish(g, out.str(), discovery::to_json(h), h.diagnostics, h.complete, display_name(file));
}

void run_rls(const Globals& g, const std::string& file) {
  auto r = decode_file(file, [](LineSource& l, const std::string& n) { return discovery::decode_rls(l, n); });
  std::ostringstream out;
  for (const auto& n : r.nodes) {
    out << "Node " << n.node << ", gpu_id " << n.gpu_id_hex << ": ";
    if (!n.active_runlist) {
      out << "no active runlist\n";
      continue;
    }
    out << n.packets.size() << " packet(s)\n";
    for (const auto& p : n.packets) {
      out << "  +" << hex(p.dword_offset * 4) << " " << p.opcode_name;
      for (const auto& f : p.fields) {
        if (p.opcode_name == "MAP_PROCESS" && f.name != "pasid" && f.name != "num_queues" &&
            f.name != "process_quantum")
          continue;
        out << " " << f.name << "=" << (f.address ? hex(f.value) : std::to_string(f.value));
      }
      out << (p.complete ? "" : " INCOMPLETE") << "\n";
    }
  }
  finish(g, out.str(), discovery::to_json(r), r.diagnostics, r.complete, display_name(file));
}

}  // namespace

void register_decode_commands(CLI::App& app, Globals& globals) {
  CLI::App* decode = app.add_subcommand("decode", "Decode KFD sysfs/debugfs text formats");
  decode->require_subcommand(1);
  const std::string exits =
      "FILE may be '-' (stdin, read as a stream: pipe a FIFO there). A directory, FIFO, device or\n"
      "unreadable file is refused with the reason. Malformed or truncated input: each problem is\n"
      "printed on stderr as FILE:LINE: what was expected (the first 20, then how many more), quoting\n"
      "at most 80 bytes of the line with control bytes escaped; the partial result is still printed\n"
      "(marked incomplete). A file of another kind (hqds given to 'decode mqds', a HIP log, ...) is\n"
      "named with the command that reads it.\n"
      "Exit codes: 0 decoded completely, 1 unreadable, wrong kind or incomplete input, 2 usage.";
  struct Spec {
    const char* name;
    const char* help;
    const char* footer;
    void (*run)(const Globals&, const std::string&);
    bool live_default;
  };
  static const Spec specs[] = {
      {"properties", "A KFD topology node's properties file (any kernel age)",
       "Example: gpreempt decode properties /sys/class/kfd/kfd/topology/nodes/1/properties --json\n",
       run_properties, false},
      {"mqds", "debugfs mqds: per process its queues and their GFX9 MQDs (one per XCC)",
       "Example: sudo gpreempt decode mqds            (reads /sys/kernel/debug/kfd/mqds)\n"
       "         gpreempt decode mqds saved_mqds.txt --json\n",
       run_mqds, true},
      {"hqds", "debugfs hqds: hardware queue slots per node/XCC/pipe/queue, active ones decoded",
       "Example: sudo gpreempt decode hqds            (reads /sys/kernel/debug/kfd/hqds)\n", run_hqds, true},
      {"rls", "debugfs rls: the scheduler's runlist as PM4 packets (MAP_PROCESS, MAP_QUEUES, ...)",
       "Example: sudo gpreempt decode rls             (reads /sys/kernel/debug/kfd/rls)\n", run_rls, true},
  };
  for (const Spec& s : specs) {
    auto file = std::make_shared<std::string>(s.live_default ? std::string(kDebugfs) + s.name : "");
    CLI::App* sub = add_command(*decode, globals, s.name, s.help, std::string(s.footer) + exits);
    auto* opt = sub->add_option("FILE", *file, "File to decode, or - for stdin");
    if (s.live_default)
      opt->capture_default_str();
    else
      opt->required();
    auto run = s.run;
    sub->callback([&globals, file, run] { run(globals, *file); });
  }
}

}  // namespace gpreempt::cli
