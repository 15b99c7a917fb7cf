// `gpreempt experiment queue-ids`: the user's queue-id experiments, automated. Runs a model N
// times alone and once together with another, snapshots its queues before / during / after
// (per-process sysfs; debugfs mqds too when readable) and answers: are the ids stable across
// runs, do two models' queues differ, do they overlap when run together.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "cli.h"
#include "common/child_reaper.h"
#include "discovery/json.h"
#include "discovery/process_discovery.h"
#include "discovery/queue_id_experiment.h"

extern char** environ;

namespace gpreempt::cli {

namespace {

namespace fs = std::filesystem;
using discovery::ModelRun;

struct ExperimentOptions {
  std::string model;
  std::string concurrent;
  unsigned runs = 5;
  std::string out;
  double timeout = 600;
  double poll = 0.05;
  std::string debugfs = "/sys/kernel/debug/kfd";
  discovery::SystemRoots roots;
};

struct Launched {
  std::string model;  // "A" / "B"
  pid_t pid = -1;
  int status = -1;
  bool done = false;
  // Busiest snapshot of every GPU process descended from `pid`.
  std::map<int, discovery::ProcessInfo> busiest;
  std::map<int, std::string> mqds_at_busiest;
};

// The model's own output goes to `log` (kept with the snapshots), not into gpreempt's output.
pid_t spawn_shell(const std::string& cmd, const fs::path& log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // its own group: killed as one on timeout
  posix_spawnattr_setpgroup(&attr, 0);
  std::string c = cmd;
  char* argv[] = {const_cast<char*>("/bin/sh"), const_cast<char*>("-c"), c.data(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, "/bin/sh", &fa, &attr, argv, environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw Failure("cannot start /bin/sh -c '" + cmd + "': " + std::strerror(rc));
  track_child(-pid);  // the whole group: the model and whatever it started
  return pid;
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void save(const fs::path& p, const nlohmann::ordered_json& j) {
  std::ofstream out(p);
  out << dump_json(j.is_object() ? json_conventions::document(j) : j) << "\n";
  if (!out) throw Failure("cannot write " + p.string());
}

nlohmann::ordered_json snapshot_json(const std::vector<discovery::ProcessInfo>& procs) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const auto& p : procs) a.push_back(discovery::to_json(p));
  return a;
}

// Ring bases of a process's queues from a debugfs mqds capture, matched to sysfs ids.
std::map<std::uint32_t, std::uint64_t> ring_bases(const std::string& mqds_text, const discovery::ProcessInfo& p) {
  std::map<std::uint32_t, std::uint64_t> out;
  auto m = discovery::decode_mqds(mqds_text, "mqds");
  discovery::QueueMapInputs in;
  in.mqds = &m;
  in.known = p.queues;
  in.pid = p.pid;
  for (const auto& r : discovery::build_queue_map(in).queues)
    if (r.queue_id && r.ring_base) out[*r.queue_id] = *r.ring_base;
  return out;
}

// Runs the commands together until all exit, sampling their GPU processes.
std::vector<Launched> run_set(const ExperimentOptions& o, const std::vector<std::pair<std::string, std::string>>& cmds,
                              const fs::path& dir, const std::string& label) {
  save(dir / (label + "-before.json"), snapshot_json(discovery::gpu_processes(o.roots)));
  std::vector<Launched> l;
  for (const auto& [model, cmd] : cmds) {
    Launched x;
    x.model = model;
    x.pid = spawn_shell(cmd, dir / (label + "-" + model + ".log"));
    std::cerr << "  " << label << ": model " << model << " started (pid " << x.pid << ")\n";
    l.push_back(std::move(x));
  }
  const auto start = std::chrono::steady_clock::now();
  const bool debugfs = static_cast<bool>(read_text(o.debugfs + "/mqds"));
  while (true) {
    bool all_done = true;
    for (auto& x : l) {
      if (x.done) continue;
      int st = 0;
      if (::waitpid(x.pid, &st, WNOHANG) == x.pid) {
        untrack_child(-x.pid);
        x.done = true;
        x.status = st;
        std::cerr << "  " << label << ": model " << x.model << " exited ("
                  << (WIFEXITED(st) ? "status " + std::to_string(WEXITSTATUS(st))
                                    : "signal " + std::to_string(WTERMSIG(st)))
                  << ")\n";
      } else {
        all_done = false;
      }
    }
    if (all_done) break;
    auto procs = discovery::gpu_processes(o.roots);
    std::optional<std::string> mqds;
    for (auto& x : l) {
      if (x.done) continue;
      for (auto& p : procs) {
        if (!discovery::descends_from(o.roots, p.pid, x.pid)) continue;
        auto it = x.busiest.find(p.pid);
        if (it != x.busiest.end() && it->second.queues.size() >= p.queues.size()) continue;
        if (it == x.busiest.end() || p.queues.size() > it->second.queues.size())
          std::cerr << "  " << label << ": model " << x.model << " pid " << p.pid << " has " << p.queues.size()
                    << " queue(s)\n";
        if (debugfs && !mqds) mqds = read_text(o.debugfs + "/mqds");
        if (mqds) x.mqds_at_busiest[p.pid] = *mqds;
        x.busiest[p.pid] = p;
      }
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > o.timeout) {
      for (auto& x : l)
        if (!x.done) ::kill(-x.pid, SIGKILL);
      for (auto& x : l)
        if (!x.done) {
          ::waitpid(x.pid, &x.status, 0);
          untrack_child(-x.pid);
          x.done = true;
        }
      throw Failure(label + ": still running after --timeout " + std::to_string(o.timeout) + " s; killed");
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(o.poll));
  }
  nlohmann::ordered_json during = nlohmann::ordered_json::array();
  for (const auto& x : l)
    for (const auto& [pid, p] : x.busiest) {
      auto j = discovery::to_json(p);
      j["model"] = x.model;
      during.push_back(j);
      if (auto it = x.mqds_at_busiest.find(pid); it != x.mqds_at_busiest.end())
        std::ofstream(dir / (label + "-" + x.model + "-pid" + std::to_string(pid) + "-mqds.txt")) << it->second;
    }
  save(dir / (label + "-during.json"), during);
  auto after = discovery::gpu_processes(o.roots);
  save(dir / (label + "-after.json"), snapshot_json(after));
  for (const auto& x : l)
    for (const auto& [pid, p] : x.busiest)
      for (const auto& a : after)
        if (a.pid == pid)
          std::cerr << "  " << label << ": warning: pid " << pid << " still listed by KFD after exit\n";
  return l;
}

std::vector<ModelRun> model_runs(const std::vector<Launched>& l, const std::string& model, int run) {
  std::vector<ModelRun> out;
  for (const auto& x : l) {
    if (x.model != model) continue;
    for (const auto& [pid, p] : x.busiest) {
      ModelRun r;
      r.model = model;
      r.run = run;
      r.pid = pid;
      std::map<std::uint32_t, std::uint64_t> rings;
      if (auto it = x.mqds_at_busiest.find(pid); it != x.mqds_at_busiest.end()) rings = ring_bases(it->second, p);
      for (const auto& q : p.queues) {
        discovery::QueueIdentity id{q.queue_id, q.gpu_id, q.type, {}};
        if (auto it = rings.find(q.queue_id); it != rings.end()) id.ring_base = it->second;
        r.queues.push_back(id);
      }
      out.push_back(std::move(r));
    }
  }
  return out;
}

// A model that exited non-zero or was killed makes the experiment fail: its queues may be those of
// a crash, not of the model. Names the run, the model, the command, how it ended and its log.
void fail_if_a_model_failed(const std::vector<Launched>& l, const std::vector<std::pair<std::string, std::string>>& cmds,
                            const fs::path& dir, const std::string& label) {
  for (const auto& x : l) {
    if (WIFEXITED(x.status) && WEXITSTATUS(x.status) == 0) continue;
    const std::string how = WIFEXITED(x.status) ? "exited with status " + std::to_string(WEXITSTATUS(x.status))
                                                : "was killed by signal " + std::to_string(WTERMSIG(x.status));
    std::string cmd;
    for (const auto& [m, c] : cmds)
      if (m == x.model) cmd = c;
    const fs::path log = dir / (label + "-" + x.model + ".log");
    std::string last;
    if (auto text = read_text(log.string())) {
      std::istringstream in(*text);
      for (std::string line; std::getline(in, line);)
        if (!line.empty()) last = line;
    }
    Failure f(label + ": model " + x.model + " (" + cmd + ") " + how + "; the experiment stops" +
              (last.empty() ? "" : " — last line of its output: " + last.substr(0, 300)) + " (all of it: " +
              log.string() + ")");
    f.detail = {{"run", label}, {"model", x.model}, {"command", cmd}, {"log", log.string()},
                {"exit_status", WIFEXITED(x.status) ? nlohmann::json(WEXITSTATUS(x.status)) : nlohmann::json()},
                {"signal", WIFSIGNALED(x.status) ? nlohmann::json(WTERMSIG(x.status)) : nlohmann::json()}};
    throw f;
  }
}

nlohmann::ordered_json runs_json(const std::vector<ModelRun>& runs) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const auto& r : runs) {
    nlohmann::ordered_json q = nlohmann::ordered_json::array();
    for (const auto& x : r.queues)
      q.push_back({{"queue_id", x.queue_id},
                   {"gpu_id", x.gpu_id},
                   {"type", x.type},
                   {"ring_base", x.ring_base ? nlohmann::ordered_json(hex(*x.ring_base)) : nlohmann::ordered_json()}});
    // run 0 is the one where --model and --concurrent ran at the same time.
    a.push_back({{"model", r.model}, {"run", r.run}, {"pid", r.pid}, {"concurrent", r.run == 0}, {"queues", q}});
  }
  return a;
}

std::string ids_text(const ModelRun& r) {
  std::string s;
  for (const auto& q : r.queues)
    s += (s.empty() ? "" : " ") + std::to_string(q.queue_id) + ":" + q.type + "@" + discovery::gpu_id_hex(q.gpu_id) +
         (q.ring_base ? "/" + hex(*q.ring_base) : "");
  return s.empty() ? "(no queues)" : s;
}

void run_experiment(const Globals& g, const ExperimentOptions& o) {
  if (o.runs == 0) throw UsageError("--runs must be at least 1");
  fs::path dir = o.out;
  if (dir.empty()) {
    char stamp[32];
    const std::time_t t = std::time(nullptr);
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::gmtime(&t));
    dir = fs::path("queue-ids-" + std::string(stamp));
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Failure("cannot create " + dir.string() + ": " + ec.message());

  std::vector<ModelRun> solo, ta, tb;
  // Runs in which a model was never seen as a GPU process: it opened no /dev/kfd, or it came and
  // went between two snapshots. The answers leave them out, and the result says so.
  nlohmann::ordered_json missed = nlohmann::ordered_json::array();
  // A process seen only before it created its first queue counts as not seen.
  const auto note_missed = [&](std::vector<ModelRun>& r, const std::string& model, const std::string& run) {
    std::erase_if(r, [](const ModelRun& m) { return m.queues.empty(); });
    if (!r.empty()) return;
    std::cerr << "  " << run << ": warning: model " << model
              << " was never seen with KFD queues (it opened no /dev/kfd, or it ran for less than the --poll "
              << "interval of " << o.poll << " s); this run is left out of the answers\n";
    missed.push_back({{"run", run}, {"model", model}});
  };
  for (unsigned i = 1; i <= o.runs; ++i) {
    std::cerr << "run " << i << "/" << o.runs << " (model A alone)\n";
    const std::string label = "run" + std::to_string(i);
    const std::vector<std::pair<std::string, std::string>> cmds = {{"A", o.model}};
    auto l = run_set(o, cmds, dir, label);
    fail_if_a_model_failed(l, cmds, dir, label);
    auto r = model_runs(l, "A", static_cast<int>(i));
    note_missed(r, "A", label);
    solo.insert(solo.end(), r.begin(), r.end());
  }
  if (!o.concurrent.empty()) {
    std::cerr << "together: model A and model B\n";
    const std::vector<std::pair<std::string, std::string>> cmds = {{"A", o.model}, {"B", o.concurrent}};
    auto l = run_set(o, cmds, dir, "together");
    fail_if_a_model_failed(l, cmds, dir, "together");
    ta = model_runs(l, "A", 0);
    tb = model_runs(l, "B", 0);
    note_missed(ta, "A", "together");
    note_missed(tb, "B", "together");
  }
  auto answers = discovery::answer_queue_id_experiment(solo, ta, tb);
  auto opt_bool = [](const std::optional<bool>& b) { return b ? nlohmann::ordered_json(*b) : nlohmann::ordered_json(); };
  nlohmann::ordered_json j = {{"model", o.model},
                              {"concurrent", o.concurrent.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(o.concurrent)},
                              {"runs", runs_json(solo)},
                              {"together", runs_json([&] {
                                 auto v = ta;
                                 v.insert(v.end(), tb.begin(), tb.end());
                                 return v;
                               }())},
                              {"solo_runs", o.runs},
                              {"together_run", !o.concurrent.empty()},
                              {"answers",
                               // From no solo run there is no answer: null, never false.
                               {{"ids_stable", solo.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(answers.ids_stable)},
                                {"models_differ", opt_bool(answers.models_differ)},
                                {"ids_overlap_together", opt_bool(answers.ids_overlap_together)},
                                {"identities_overlap_together", opt_bool(answers.identities_overlap_together)},
                                {"explanation", answers.explanation}}},
                              {"complete", missed.empty()},
                              {"missed", missed},
                              {"out_dir", dir.string()}};
  save(dir / "result.json", j);
  // A partial result is still printed, then the exit status says it is partial.
  const auto fail_if_incomplete = [&] {
    if (!missed.empty())
      exit_partial("experiment incomplete: " + std::to_string(missed.size()) +
                   " model run(s) never seen with KFD queues (see above); partial result printed");
  };
  if (g.json) {
    print_json(j);
    fail_if_incomplete();
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : solo) rows.push_back({std::to_string(r.run), "A", std::to_string(r.pid), ids_text(r)});
  for (const auto& r : ta) rows.push_back({"together", "A", std::to_string(r.pid), ids_text(r)});
  for (const auto& r : tb) rows.push_back({"together", "B", std::to_string(r.pid), ids_text(r)});
  std::cout << table({"RUN", "MODEL", "PID", "QUEUES (id:type@gpu[/ring base])"}, rows) << "\n";
  auto yn = [](const std::optional<bool>& b) { return b ? (*b ? "yes" : "no") : "not measured (no --concurrent)"; };
  std::cout << "Runs: " << o.runs << " of model A alone, one after the other"
            << (o.concurrent.empty() ? "; no run together (no --concurrent)\n"
                                     : "; then one of A and B at the same time (\"together\")\n");
  std::cout << "Stable queue ids across runs:           "
            << (solo.empty() ? "not measured (no solo run was seen on the GPU)" : answers.ids_stable ? "yes" : "no") << "\n"
            << "Models' queue ids differ:               " << yn(answers.models_differ) << "\n"
            << "Same numeric ids when run together:     " << yn(answers.ids_overlap_together) << "\n"
            << "Same queue (pid,id)/(gpu,ring) together: " << yn(answers.identities_overlap_together) << "\n\n";
  for (const auto& e : answers.explanation) std::cout << "- " << e << "\n";
  std::cout << "Raw snapshots: " << dir.string() << "/\n";
  fail_if_incomplete();
}

}  // namespace

void register_experiment_commands(CLI::App& app, Globals& globals) {
  CLI::App* exp = app.add_subcommand("experiment", "The user's queue experiments, automated");
  exp->require_subcommand(1);
  auto o = std::make_shared<ExperimentOptions>();
  CLI::App* q = add_command(
      *exp, globals, "queue-ids",
      "Are a model's queue ids stable, do two models differ, do they overlap when run together?",
      "Runs --model N times alone (and once with --concurrent), watching the GPU processes it starts:\n"
      "queues from /sys/class/kfd/kfd/proc (no root), ring bases from debugfs mqds when readable.\n"
      "Snapshots before/during (busiest moment)/after each run are saved in --out (default\n"
      "./queue-ids-<time>/) with result.json. Progress goes to stderr.\n"
      "Queue ids are per process: the identity of a queue is (pid, queue id) or (gpu, ring base).\n"
      "Example on the simulated GPU:\n"
      "  kfdsim run -- gpreempt experiment queue-ids --runs 3 \\\n"
      "     --model 'gpreempt-workload offline --preset cnn --duration 0.5' \\\n"
      "     --concurrent 'gpreempt-workload online --preset transformer --duration 0.5'\n"
      "(presets: gpreempt-workload presets)\n"
      "A model run never seen with KFD queues (no /dev/kfd, or shorter than --poll) is left out of\n"
      "the answers and listed under \"missed\"; the result is then marked incomplete (exit 1).\n"
      "A model that exits non-zero or is killed fails the experiment at once (which run, how it\n"
      "ended, its log); no answer is computed from the runs that remain.\n"
      "Exit codes: 0 ok, 1 a model failed, a run timed out, a model run was missed, or the output\n"
      "cannot be written, 2 usage.");
  q->add_option("--model", o->model, "Shell command of the model to run")->required();
  q->add_option("--runs", o->runs, "Solo runs of --model")->capture_default_str();
  q->add_option("--concurrent", o->concurrent, "Shell command of a second model, run once together with --model");
  q->add_option("--out", o->out, "Directory for the raw snapshots and result.json");
  q->add_option("--timeout", o->timeout, "Seconds before a run is killed")->capture_default_str();
  q->add_option("--poll", o->poll, "Seconds between snapshots while a run is going")->capture_default_str();
  q->add_option("--debugfs", o->debugfs, "KFD debugfs directory")->capture_default_str();
  q->add_option("--sysfs", o->roots.kfd_sysfs, "KFD sysfs directory")->capture_default_str();
  q->callback([&globals, o] { run_experiment(globals, *o); });
}

}  // namespace gpreempt::cli
