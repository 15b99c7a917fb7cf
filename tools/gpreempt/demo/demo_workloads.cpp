#include "demo/demo_workloads.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "client/connection.h"
#include "common/error.h"

namespace gpreempt::demo {

const std::vector<ModelWorkload>& model_workloads() {
  static const std::vector<ModelWorkload> models = {
      {"resnet18", Side::kOnline, "torchvision ResNet-18 inference, batch 1, 20 req/s (Poisson)",
       20},
      {"resnet50", Side::kOnline, "torchvision ResNet-50 inference, batch 1, 20 req/s (Poisson)",
       20},
      {"linear512", Side::kOnline, "toy service: Linear 512, batch 32, a request every 500 ms", 2},
      {"mm4096", Side::kOnline, "matmul case, high priority: torch.mm 4096x4096 per request, 10/s",
       10},
      {"resnet50-train", Side::kOffline, "torchvision ResNet-50 training, batch 64, SGD"},
      {"resnet18-train", Side::kOffline, "torchvision ResNet-18 training, batch 64, SGD"},
      {"transformer-train", Side::kOffline,
       "12-layer d=768 transformer encoder training, seq 128, batch 64, Adam"},
      {"linear1024-train", Side::kOffline,
       "toy job: SimpleModel (Linear 1024) training, batch 64, 0.1 s sleeps"},
      {"mm4000", Side::kOffline, "torch.mm of 4000x4000 fp32 matrices in a loop"},
      {"mm8192x5", Side::kOffline, "matmul case, low priority: five torch.mm 8192x8192 per iteration"},
      {"mm2048", Side::kOffline, "torch.mm of 2048x2048 fp32 matrices in a loop"},
      // The LLM pair (llama-1b: a scenario must end in about a minute on two cores). Fixed
      // lengths, vLLM's random-dataset defaults (1024-token prompts, 128 output tokens), bound
      // how long the last requests take after the last arrival; at 1 req/s a request (about
      // 1.5 s alone) overlaps one or two others, and the GPU is free between their steps.
      {"llm-serve", Side::kOnline,
       "llama-1b LLM server (gpreempt.sim.serve), 1024-token prompts, 128 output tokens, 1 req/s "
       "(Poisson), 50 requests per scenario",
       1, Runner::kServe, 50, 10, 5.0, false},
      {"llm-finetune", Side::kOffline,
       "llama-1b full fine-tuning, AdamW, batch 4 x 1024 tokens (gpreempt.sim.finetune)", 0,
       Runner::kFinetune},
  };
  return models;
}

const ModelWorkload* find_model(const std::string& name, Side side) {
  for (const auto& m : model_workloads())
    if (m.side == side && name == m.name) return &m;
  return nullptr;
}

std::string model_names(Side side, Runner runner) {
  std::string s;
  for (const auto& m : model_workloads()) {
    // kServe and kFinetune both stand for the LLM workloads (each side has one runner).
    const bool llm = m.runner != Runner::kModel;
    if (m.side == side && llm == (runner != Runner::kModel))
      s += (s.empty() ? "" : ", ") + std::string(m.name);
  }
  return s;
}

std::string all_model_names(Side side) {
  const std::string llm = model_names(side, Runner::kServe);
  return model_names(side) + (llm.empty() ? "" : ", " + llm);
}

bool is_model(const std::string& name, Side side) { return find_model(name, side) != nullptr; }

std::vector<std::string> preset_names(const std::string& preset_program) {
  ChildProcess list({preset_program, "presets", "--json"});
  const int rc = list.wait();
  if (rc != 0)
    throw Error(EIO, "'" + list.command_line() + "' failed with exit code " + std::to_string(rc));
  std::vector<std::string> names;
  try {
    const auto doc = nlohmann::json::parse(list.output());
    for (const auto& p : doc.at("presets")) names.push_back(p.at("name").get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    throw Error(EPROTO, "'" + list.command_line() + "' printed no preset list: " + e.what());
  }
  return names;
}

double default_rate_hz(const std::string& preset_program, const std::string& name) {
  for (const auto& m : model_workloads())
    if (m.side == Side::kOnline && name == m.name) return m.rate_hz;
  ChildProcess list({preset_program, "presets", "--json"});
  const int rc = list.wait();
  if (rc != 0)
    throw Error(EIO, "'" + list.command_line() + "' failed with exit code " + std::to_string(rc));
  try {
    const auto doc = nlohmann::json::parse(list.output());
    for (const auto& p : doc.at("presets"))
      if (p.at("name") == name) return p.at("online_rate_hz").get<double>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(EPROTO, "'" + list.command_line() + "' printed no preset list: " + e.what());
  }
  throw Error(ENOENT, "no online workload named '" + name + "'");
}

std::string online_cmdline_glob(const WorkloadSpec& spec) {
  const auto* m = find_model(spec.name, Side::kOnline);
  if (!m) return "*gpreempt-workload online *";
  return m->runner == Runner::kServe ? "* -m gpreempt.sim.serve *"
                                     : "* -m gpreempt.sim.workload online *";
}

namespace {

// An LLM workload's command line: its own program and options (python3 -m gpreempt.sim.serve
// or gpreempt.sim.finetune), the same --ready-file protocol and --json.
void llm_argv(std::vector<std::string>& a, const WorkloadPrograms& programs,
              const WorkloadSpec& spec, Runner runner, double duration_s, double rate_hz,
              const std::string& ready_file) {
  if (runner == Runner::kServe) {
    // The server serves exactly the scenario's requests, arriving at the demo's rate; it ends
    // when the last one has its last token.
    a.insert(a.end(), {programs.python, "-m", "gpreempt.sim.serve", "--model", "llama-1b",
                       "--dataset", "fixed", "--input-len", "1024", "--output-len", "128",
                       "--num-prompts", std::to_string(spec.requests), "--request-rate",
                       std::to_string(rate_hz)});
  } else {
    a.insert(a.end(), {programs.python, "-m", "gpreempt.sim.finetune", "--model", "llama-1b",
                       "--duration", std::to_string(duration_s)});
    if (spec.batch > 0) a.insert(a.end(), {"--batch", std::to_string(spec.batch)});
  }
  if (!ready_file.empty()) a.insert(a.end(), {"--ready-file", ready_file});
  // They share the demo's terminal (stderr), where their status lines would overwrite its own.
  a.insert(a.end(), {"--json", "--no-progress"});
}

}  // namespace

std::vector<std::string> workload_argv(const WorkloadPrograms& programs, const WorkloadSpec& spec,
                                       double duration_s, double rate_hz, const Hints& hints,
                                       const std::string& ready_file) {
  const bool online = spec.side == Side::kOnline;
  const char* mode = online ? "online" : "offline";
  std::vector<std::string> a;
  if (!online) a = {"/usr/bin/env", "GPREEMPT_CLASS=offline"};
#if defined(__SANITIZE_ADDRESS__)
  // gpreemptd keeps the offline side attached (ptrace) until it is stopped, and under load the
  // offline side's run can end first: LeakSanitizer cannot stop a traced process's threads and
  // aborts its exit ("LeakSanitizer has encountered a fatal error"). So in an ASan build that one
  // process runs without leak checks; every other check, and every other process's, stays on.
  if (!online) {
    const char* asan = std::getenv("ASAN_OPTIONS");
    a.push_back(std::string("ASAN_OPTIONS=") + (asan ? asan : "") + ":detect_leaks=0");
  }
#endif
  const auto* model = find_model(spec.name, spec.side);
  if (model && model->runner != Runner::kModel) {
    llm_argv(a, programs, spec, model->runner, duration_s, rate_hz, ready_file);
  } else if (model) {
    a.insert(a.end(), {programs.python, "-m", "gpreempt.sim.workload", mode, "--model", spec.name});
    if (spec.batch > 0) a.insert(a.end(), {"--batch", std::to_string(spec.batch)});
    if (!ready_file.empty()) a.insert(a.end(), {"--ready-file", ready_file});
    // The same host pre-processing as the cnn preset's, so an early hint has time to act; the
    // models themselves have none.
    if (online) a.insert(a.end(), {"--preprocess-us", "2000"});
  } else {
    a.insert(a.end(), {programs.preset_program, mode, "--preset", spec.name});
  }
  if (!model || model->runner == Runner::kModel) {
    a.insert(a.end(), {"--duration", std::to_string(duration_s), "--json"});
    if (online && rate_hz > 0) a.insert(a.end(), {"--rate", std::to_string(rate_hz)});
  }
  if (online && !hints.socket.empty()) {
    // Deferred hint replies (lib/client/connection.h): the request's kernels go out without
    // waiting for gpreemptd's answer, so a daemon that is slow to be scheduled delays the
    // suspension, never the request. $GPREEMPT_HINT_REPLIES, when set, is kept (=wait compares).
    const char* mode = std::getenv(client::kHintRepliesEnv);
    a.insert(a.begin(), {"/usr/bin/env", std::string(client::kHintRepliesEnv) + "=" +
                                             (mode && *mode ? mode : "deferred")});
    a.insert(a.end(), {"--hint", hints.socket});
    if (hints.expect) a.push_back("--expect");  // the scenarios ask it of gpreempt-early sides only
  }
  return a;
}

void wait_until_ready(ChildProcess& child, const std::string& ready_file, double timeout_s) {
  using namespace std::chrono;
  const auto deadline = steady_clock::now() + duration<double>(timeout_s);
  while (::access(ready_file.c_str(), F_OK) != 0) {
    siginfo_t info{};
    // WNOWAIT: the child stays reapable, so its exit code comes from ChildProcess::wait.
    if (::waitid(P_PID, static_cast<id_t>(child.pid()), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == child.pid()) {
      const int rc = child.wait();
      throw Error(EIO, "'" + child.command_line() + "' ended (exit code " + std::to_string(rc) +
                           ") before its model was ready");
    }
    if (steady_clock::now() > deadline)
      throw Error(ETIMEDOUT, "'" + child.command_line() + "' was not ready within " +
                                 std::to_string(static_cast<int>(timeout_s)) + " s");
    std::this_thread::sleep_for(milliseconds(20));
  }
}

void release(const std::string& ready_file) {
  if (::unlink(ready_file.c_str()) != 0)
    throw Error(errno,
                "cannot start the model workload: unlink " + ready_file + ": " + errno_text(errno));
}

}  // namespace gpreempt::demo
