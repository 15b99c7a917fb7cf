// `gpreempt log analyze|compare`: what a HIP runtime log (AMD_LOG_LEVEL 1-5) says about hardware
// queues, dispatches, kernels, threads and errors — streamed, so multi-GB logs are fine.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "common/error.h"
#include "logs/excerpt.h"
#include "logs/json.h"
#include "logs/log_notes.h"
#include "logs/log_file.h"

namespace gpreempt::cli {

namespace {

struct LogOptions {
  std::vector<std::string> files;
  std::optional<int> pid;
  std::string config_dir;
  std::size_t max_errors = 1000;
  unsigned threads = 0;  // 0 = one per core (regular files only)
};

logs::LogSummary analyze(const std::string& path, const LogOptions& o) {
  logs::AnalyzerOptions ao;
  ao.pid = o.pid;
  ao.max_errors = o.max_errors;
  try {
    return logs::analyze_file(path, ao, o.threads);
  } catch (const gpreempt::Error&) {
    throw;  // keeps its errno for the --json failure document
  } catch (const std::runtime_error& e) {
    throw Failure(e.what());
  }
}

std::string opt_str(const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : "-"; }

// Kernel names are the program's bytes: quoted, not sent to the terminal as they are.
std::string printable(const std::string& name) { return logs::excerpt(name, 100); }

std::string human_summary(const std::string& file, const logs::LogSummary& s) {
  std::ostringstream out;
  out << file << ": " << s.lines << " lines, " << s.recognized << " of " << s.records
      << " records recognized, " << s.dispatches << " dispatches, " << s.barriers << " barriers, "
      << s.errors_total << " error(s)\n";
  for (const auto& p : s.processes)
    out << "  process " << (p.pid ? std::to_string(*p.pid) : std::string("(pid not printed)")) << ": "
        << p.tids.size() << " thread(s)\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& q : s.hw_queues) {
    std::string ids;
    for (auto id : q.ids) ids += (ids.empty() ? "" : ",") + std::to_string(id);
    rows.push_back({hex(q.address), q.pid ? std::to_string(*q.pid) : "-", std::to_string(q.sw_queues.size()),
                    opt_str(q.size), q.priority ? std::to_string(*q.priority) : "-", ids.empty() ? "-" : ids,
                    std::to_string(q.acquired), std::to_string(q.dispatches), std::to_string(q.barriers)});
  }
  if (!rows.empty())
    out << table({"HWQ", "PID", "SWQS", "SIZE", "PRIORITY", "IDS", "STREAMS", "DISPATCHES", "BARRIERS"}, rows);
  if (!s.kernels.empty()) {
    std::vector<std::vector<std::string>> k;
    for (const auto& [name, n] : s.kernels)
      k.push_back({std::to_string(n), printable(name)});
    out << table({"COUNT", "KERNEL"}, k);
  }
  for (const auto& e : s.errors) out << "  error at line " << e.line << ": " << e.text << "\n";
  if (s.errors_total > s.errors.size())
    out << "  (" << s.errors_total - s.errors.size() << " more errors not listed)\n";
  return out.str();
}

void write_configs(const std::string& dir, const logs::LogSummary& s, std::optional<int> pid,
                   std::vector<std::string>& written) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Failure("cannot create " + dir + ": " + ec.message());
  for (const auto& c : logs::queue_configs(s, pid)) {
    const std::string name = dir + "/queue_config_pid_" + (c.pid ? std::to_string(*c.pid) : "unknown") + ".json";
    std::ofstream out(name);
    out << dump_json(json_conventions::document(logs::to_json(c))) << "\n";
    if (!out) throw Failure("cannot write " + name);
    written.push_back(name);
  }
}

// Files that hold no HIP log: the user gave the wrong file, or ran without AMD_LOG_LEVEL (exit 1,
// after whatever was printed for the other files).
void fail_if_empty(const std::vector<std::string>& empty) {
  if (empty.empty()) return;
  std::string names;
  for (const auto& e : empty) names += (names.empty() ? "" : ", ") + e;
  exit_partial(names + ": no HIP runtime log records; " + logs::kWhatAHipLogIs);
}

void run_analyze(const Globals& g, const LogOptions& o) {
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  std::string human;
  std::vector<std::string> written, empty;
  for (const auto& f : o.files) {
    const std::string name = f == "-" ? "<stdin>" : f;
    auto s = analyze(f, o);
    const logs::LogNotes notes = logs::notes_for(s, o.pid);
    files.push_back(logs::file_json(name, s, o.pid));
    human += human_summary(name, s);
    if (notes.no_records) empty.push_back(name);
    else
      for (const auto& t : notes.text) human += "  note: " + t + "\n";
    if (!o.config_dir.empty()) write_configs(o.config_dir, s, o.pid, written);
  }
  for (const auto& w : written) human += "wrote " + w + "\n";
  // One shape for one file and for N: always the "files" list.
  nlohmann::ordered_json out = {{"files", files}};
  if (!written.empty()) out["config_files"] = written;
  if (g.json)
    print_json(out);
  else
    std::cout << human;
  fail_if_empty(empty);
}

void run_compare(const Globals& g, const std::string& a, const std::string& b, const LogOptions& o) {
  auto sa = analyze(a, o), sb = analyze(b, o);
  auto c = logs::compare(sa, sb);
  std::vector<std::string> empty;
  if (logs::notes_for(sa, o.pid).no_records) empty.push_back(a);
  if (logs::notes_for(sb, o.pid).no_records) empty.push_back(b);
  if (g.json) {
    nlohmann::ordered_json j = {{"file_a", a}, {"file_b", b}};
    j.update(logs::to_json(c));
    print_json(j);
    fail_if_empty(empty);
    return;
  }
  std::ostringstream out;
  out << "A = " << a << "\nB = " << b << "\n";
  out << table({"", "A", "B"},
               {{"hardware queues", std::to_string(c.hw_queues_a), std::to_string(c.hw_queues_b)},
                {"dispatches", std::to_string(c.dispatches_a), std::to_string(c.dispatches_b)},
                {"barriers", std::to_string(c.barriers_a), std::to_string(c.barriers_b)},
                {"errors", std::to_string(c.errors_a), std::to_string(c.errors_b)}});
  out << "HWq addresses: " << c.hwq_common.size() << " in both, " << c.hwq_only_a.size() << " only in A, "
      << c.hwq_only_b.size() << " only in B (addresses are per process: equal addresses in two runs are "
      << "a coincidence of the allocator, not the same queue)\n";
  std::vector<std::vector<std::string>> k;
  for (const auto& d : c.kernels) k.push_back({std::to_string(d.a), std::to_string(d.b), printable(d.name)});
  if (!k.empty()) out << table({"A", "B", "KERNEL"}, k);
  std::cout << out.str();
  fail_if_empty(empty);
}

}  // namespace

void register_log_commands(CLI::App& app, Globals& globals) {
  CLI::App* log = app.add_subcommand("log", "Analyze HIP runtime logs (AMD_LOG_LEVEL=1..5)");
  log->require_subcommand(1);
  auto o = std::make_shared<LogOptions>();
  CLI::App* analyze = add_command(
      *log, globals, "analyze", "Hardware queues, dispatches, kernels, threads and errors of a log",
      "Reads every ROCclr line format (ROCm 4 to 7: [pid:N tid:X], 'N : [tid:X]', 'N: [X]', '[X]!<TAB>',\n"
      "no prefix; ANSI colour; terminal-wrapped pastes), streaming: any size, constant memory.\n"
      "FILE may be '-'. Errors: level-1 records, any function's 'Returned <code>' other than\n"
      "hipSuccess, GPU faults. Dispatches are logged from AMD_LOG_LEVEL=4 on (level 3: API calls,\n"
      "queues, kernels). HWq is the address of ROCr's amd_queue_t; HWq + 0x80 is the queue's\n"
      "read-pointer address that `gpreempt map --log` joins with debugfs.\n"
      "Examples:\n"
      "  AMD_LOG_LEVEL=4 ./app 2> app.log && gpreempt log analyze app.log\n"
      "  gpreempt log analyze app.log --pid 4242 --config out/   # writes out/queue_config_pid_4242.json\n"
      "  gpreempt log analyze big.log --threads 4 --json          # same output as --threads 1\n"
      "  AMD_LOG_LEVEL=3 python train.py 2>&1 | gpreempt log analyze - --max-errors 20\n"
      "  gpreempt log analyze run1.log run2.log --json            # {\"files\": [...]}\n"
      "Exit codes: 0 ok, 1 unreadable file or a file without HIP log records, 2 usage.");
  analyze->add_option("FILE", o->files, "Log file(s), or - for stdin")->required();
  analyze->add_option("--pid", o->pid, "Only records of this pid (records without a pid are kept)");
  analyze->add_option("--config", o->config_dir, "Write queue_config_pid_<pid>.json files into this directory");
  analyze->add_option("--max-errors", o->max_errors, "Errors listed (all are counted)")->capture_default_str();
  analyze->add_option("--threads", o->threads,
                      "Threads for a regular file (0 = one per core); the result is the same")
      ->capture_default_str();
  analyze->callback([&globals, o] { run_analyze(globals, *o); });

  auto a = std::make_shared<std::string>(), b = std::make_shared<std::string>();
  CLI::App* cmp = add_command(
      *log, globals, "compare", "Compare two logs: queues, priorities, dispatches, kernels",
      "Example: gpreempt log compare run1.log run2.log --json\n"
      "Exit codes: 0 ok, 1 unreadable file or a file without HIP log records, 2 usage.");
  cmp->add_option("A", *a, "First log")->required();
  cmp->add_option("B", *b, "Second log")->required();
  cmp->add_option("--pid", o->pid, "Only records of this pid");
  cmp->callback([&globals, a, b, o] { run_compare(globals, *a, *b, *o); });
}

}  // namespace gpreempt::cli
