// gpreempt-workload: the online service and the offline trainer of the demos, on simrt.
//   gpreempt-workload online  --preset NAME --duration S [--requests N] [--rate HZ] [--arrival poisson|fixed]
//                             [--seed N] [--priority P] [--notify PATH [--notify-wait]]
//                             [--hint [SOCKET] [--expect]] [--preprocess-us US] [--json]
//   gpreempt-workload offline --preset NAME --duration S [--priority P] [--json]
//   gpreempt-workload presets [--json]
// Exit codes: 0 ok, 1 operational failure, 2 usage.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "common/json_conventions.h"
#include "hint_observer.h"
#include "notifier.h"
#include "presets.h"
#include "runners.h"

using namespace gpreempt::workloads;

namespace {

std::string preset_names() {
  std::string s;
  for (const auto& p : presets()) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

// A kernel in gpreempt-des's own terms (docs/evaluation-des.md, "Kernels"): the same GPU model
// prices it from its workgroup count and cost, so the DES can replay a preset's request exactly.
nlohmann::json des_kernel(const simrt::Kernel& k) {
  const uint64_t wg = static_cast<uint64_t>(k.workgroup[0]) * k.workgroup[1] * k.workgroup[2];
  static const char* const kKinds[] = {"generic", "matrix", "vector"};
  return {{"name", k.name},
          {"workgroups", (work_items(k) + wg - 1) / wg},
          {"wg_cost_us", static_cast<double>(k.wg_cost_ns) / 1000.0},
          {"waves_per_workgroup", (wg + 63) / 64},
          {"kind", kKinds[k.kind < 3 ? k.kind : 0]}};
}

int print_presets(bool json) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& p : presets()) {
    uint64_t on_items = 0, off_items = 0;
    for (const auto& k : p.online_request) on_items = std::max(on_items, work_items(k));
    for (const auto& k : p.offline_iteration) off_items = std::max(off_items, work_items(k));
    if (json) {
      j.push_back({{"name", p.name},
                   {"description", p.description},
                   {"online_kernels", p.online_request.size()},
                   {"online_max_work_items", on_items},
                   {"online_rate_hz", p.online_rate_hz},
                   {"arrival", p.poisson ? "poisson" : "fixed"},
                   {"offline_kernels", p.offline_iteration.size()},
                   {"offline_max_work_items", off_items},
                   {"online_request_des", [&] {
                      nlohmann::json ks = nlohmann::json::array();
                      for (const auto& k : p.online_request) ks.push_back(des_kernel(k));
                      return ks;
                    }()}});
    } else {
      std::printf("%-12s %s\n%12s online: %zu kernels/request, %.1f req/s %s; offline: %zu kernels/iteration\n",
                  p.name.c_str(), p.description.c_str(), "", p.online_request.size(),
                  p.online_rate_hz, p.poisson ? "poisson" : "fixed", p.offline_iteration.size());
    }
  }
  if (json) std::cout << gpreempt::json_conventions::document(nlohmann::ordered_json{{"presets", j}}).dump(2) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Online/offline workloads for the simulated GPU (simrt over /dev/kfd)"};
  app.footer(
      "Presets: " + preset_names() +
      " (details: gpreempt-workload presets).\n"
      "Examples:\n"
      "  kfdsim run -- gpreempt-workload offline --preset cnn --duration 5\n"
      "  kfdsim run -- gpreempt-workload online --preset transformer --duration 10 --rate 20 "
      "--json\n"
      "  GPREEMPT_CLASS=online gpreempt-workload online --preset cnn --duration 5 --hint --expect\n"
      "  kfdsim run -- sh -c 'gpreempt-workload offline --preset toy-offline --duration 5 & sleep "
      "1;\n"
      "                       gpreempt queues --pid $!'\n"
      "  gpreempt-workload presets --json\n"
      "Exit codes: 0 ok, 1 operational failure (no simulated GPU, ...), 2 usage.");
  app.require_subcommand(1);
  gpreempt::cli_common::add_version_flag(app, "gpreempt-workload");
  std::string preset_name;
  double duration = 0;
  bool json = false;
  uint32_t priority = 7;

  auto* online = app.add_subcommand("online", "open-loop request stream; per-request latency");
  double rate = 0;
  std::string arrival;
  uint64_t seed = 1;
  std::string notify;
  bool notify_wait = false;
  std::string hint_socket;
  bool expect = false;
  double preprocess_us = -1;
  uint64_t requests = 0;
  online->add_option("--preset", preset_name, "workload preset (" + preset_names() + ")")->required();
  online->add_option("--duration", duration, "seconds of arrivals")->required()->check(gpreempt::cli_common::positive());
  online->add_option("--requests", requests, "stop after this many requests (or at --duration if sooner)")
      ->check(CLI::PositiveNumber);
  online->add_option("--rate", rate, "requests per second (default: the preset's)")->check(gpreempt::cli_common::positive());
  online->add_option("--arrival", arrival, "poisson or fixed (default: the preset's)")
      ->check(CLI::IsMember({"poisson", "fixed"}));
  online->add_option("--seed", seed, "seed of the Poisson arrivals");
  online->add_option("--priority", priority, "KFD queue priority 0..15")->check(gpreempt::cli_common::in_range(0, 15));
  online->add_option("--notify", notify, "Unix socket or FIFO that receives request start/end lines");
  online->add_flag("--notify-wait", notify_wait, "after each start line wait for a one-byte reply");
  auto* hint = online->add_option(
      "--hint", hint_socket,
      "tell gpreemptd about each request (begin/end) over SOCKET (default: $GPREEMPT_SOCKET, else "
      "/run/gpreempt/gpreemptd.sock). Fails open: while no daemon answers, requests run "
      "unprotected (one warning; --json counts them under \"hint\") and the client reconnects");
  hint->expected(0, 1);
  online->add_flag("--expect", expect,
                   "early hint: before each request's pre-processing tell gpreemptd it starts in "
                   "--preprocess-us (needs --hint)");
  online
      ->add_option("--preprocess-us", preprocess_us,
                   "host pre-processing before each request's kernels, part of its latency "
                   "(default: the preset's)")
      ->check(CLI::NonNegativeNumber);
  online->add_flag("--json", json, "machine-readable result");

  auto* offline = app.add_subcommand("offline", "training-like loop; iterations per second");
  offline->add_option("--preset", preset_name, "workload preset (" + preset_names() + ")")->required();
  offline->add_option("--duration", duration, "seconds")->required()->check(gpreempt::cli_common::positive());
  offline->add_option("--priority", priority, "KFD queue priority 0..15")->check(gpreempt::cli_common::in_range(0, 15));
  offline->add_flag("--json", json, "machine-readable result");

  auto* list = app.add_subcommand("presets", "list the presets");
  list->add_flag("--json", json, "machine-readable list");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (list->parsed()) return print_presets(json);

  auto preset = find_preset(preset_name);
  if (!preset) {
    std::fprintf(stderr, "gpreempt-workload: unknown preset '%s' (known: %s)\n", preset_name.c_str(),
                 preset_names().c_str());
    return 2;
  }
  if (online->parsed() && hint->count() > 0 && !notify.empty()) {
    std::fprintf(stderr, "gpreempt-workload: --hint and --notify exclude each other\n");
    return 2;
  }
  if (expect && hint->count() == 0) {
    std::fprintf(stderr, "gpreempt-workload: --expect needs --hint\n");
    return 2;
  }
  if (notify_wait && notify.empty()) {
    std::fprintf(stderr, "gpreempt-workload: --notify-wait needs --notify PATH\n");
    return 2;
  }

  try {
    simrt::Runtime rt;
    if (online->parsed()) {
      std::unique_ptr<RequestObserver> observer;
      HintObserver* hints = nullptr;
      if (!notify.empty()) observer = open_notifier(notify, notify_wait);
      if (hint->count() > 0) {
        auto h = open_hint_client(hint_socket);
        hints = h.get();
        observer = std::move(h);
      }
      OnlineOptions o;
      o.preset = *preset;
      o.duration_s = duration;
      o.requests = requests;
      o.rate_hz = rate;
      o.poisson = arrival.empty() ? preset->poisson : arrival == "poisson";
      o.seed = seed;
      o.priority = priority;
      o.observer = observer.get();
      o.preprocess_us = preprocess_us;
      o.expect = expect;
      const auto r = run_online(rt, o);
      const double used_rate = rate > 0 ? rate : preset->online_rate_hz;
      if (json) {
        nlohmann::ordered_json j = {{"mode", "online"},
                            {"preset", preset->name},
                            {"pid", getpid()},
                            {"duration_s", duration},
                            {"elapsed_s", r.elapsed_s},
                            {"rate_hz", used_rate},
                            {"arrival", o.poisson ? "poisson" : "fixed"},
                            {"priority", priority},
                            {"kernels_per_request", preset->online_request.size()},
                            {"requests_sent", r.sent},
                            {"requests_completed", r.completed},
                            {"latency_ms", to_json(r.latency_ms)}};
        if (hints) {
          const auto h = hints->stats();
          j["hint"] = {{"socket", hints->socket()},
                       {"requests_protected", h.requests_protected},
                       {"requests_unprotected", h.requests_unprotected},
                       {"reconnects", h.reconnects},
                       {"connected", h.connected}};
        }
        std::cout << gpreempt::json_conventions::document(j).dump(2) << "\n";
      } else {
        const auto& s = r.latency_ms;
        std::printf("online  preset=%s  %.1f s  %.2f req/s (%s)  priority %u  gpu_id %u\n",
                    preset->name.c_str(), duration, used_rate, o.poisson ? "poisson" : "fixed",
                    priority, rt.gpu_id());
        std::printf("requests: %llu sent, %llu completed\n",
                    static_cast<unsigned long long>(r.sent), static_cast<unsigned long long>(r.completed));
        std::printf("%-12s %9s %9s %9s %9s %9s %9s\n", "latency ms", "mean", "std", "p50", "p95", "p99", "max");
        std::printf("%-12s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n", "", s.mean, s.std, s.p50, s.p95,
                    s.p99, s.max);
        if (hints) {
          const auto h = hints->stats();
          std::printf("hints: %llu requests protected, %llu unprotected (gpreemptd away or "
                      "refusing), %llu reconnects\n",
                      static_cast<unsigned long long>(h.requests_protected),
                      static_cast<unsigned long long>(h.requests_unprotected),
                      static_cast<unsigned long long>(h.reconnects));
        }
      }
    } else {
      OfflineOptions o;
      o.preset = *preset;
      o.duration_s = duration;
      o.priority = priority;
      const auto r = run_offline(rt, o);
      if (json) {
        nlohmann::ordered_json j = {{"mode", "offline"},
                            {"preset", preset->name},
                            {"pid", getpid()},
                            {"duration_s", duration},
                            {"elapsed_s", r.elapsed_s},
                            {"priority", priority},
                            {"kernels_per_iteration", preset->offline_iteration.size()},
                            {"kernels", r.kernels},
                            {"iterations", r.iterations},
                            {"iterations_per_s", r.iterations_per_s}};
        std::cout << gpreempt::json_conventions::document(j).dump(2) << "\n";
      } else {
        std::printf("offline  preset=%s  %.1f s  priority %u  gpu_id %u\n", preset->name.c_str(),
                    duration, priority, rt.gpu_id());
        std::printf("iterations: %llu in %.3f s = %.2f iterations/s (%llu kernels)\n",
                    static_cast<unsigned long long>(r.iterations), r.elapsed_s, r.iterations_per_s,
                    static_cast<unsigned long long>(r.kernels));
      }
    }
  } catch (const simrt::Error& e) {
    std::fprintf(stderr, "gpreempt-workload: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpreempt-workload: %s\n", e.what());
    return 1;
  }
  return 0;
}
