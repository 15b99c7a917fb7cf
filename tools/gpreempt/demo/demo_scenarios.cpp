#include "demo/demo_scenarios.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "common/child_process.h"
#include "common/error.h"
#include "demo/demo_workloads.h"

namespace gpreempt::demo {

namespace {

// The offline job gets this much longer than the online one, so that it is still running (and
// attached) when the online run ends, whatever the start-up order.
constexpr double kOfflineTailS = 1.0;
// A model process imports PyTorch and runs one untimed step before it is ready: seconds on an
// idle machine, tens of seconds on a loaded one.
constexpr double kModelReadyTimeoutS = 300;

std::string secs_arg(double s) { return std::to_string(s); }

nlohmann::json finish(ChildProcess& child) {
  const int rc = child.wait();
  if (rc != 0)
    throw Error(EIO, "'" + child.command_line() + "' failed with exit code " + std::to_string(rc));
  try {
    return nlohmann::json::parse(child.output());
  } catch (const nlohmann::json::exception& e) {
    throw Error(EPROTO, "'" + child.command_line() + "' printed no JSON result: " + e.what());
  }
}

// Queues appear once the workload's runtime is up; attaching or starting the online side before
// then would measure start-up, not interference. A start takes milliseconds, but seconds on a
// machine loaded by Python model processes and other work.
void wait_for_queues(const ChildProcess& child) {
  using namespace std::chrono;
  const auto deadline = steady_clock::now() + std::chrono::seconds(60);
  while (gpreempt_find_queues_by_process(child.pid(), nullptr, 0) <= 0) {
    if (steady_clock::now() > deadline)
      throw Error(ETIMEDOUT, "'" + child.command_line() + "' created no KFD queue within 60 s");
    std::this_thread::sleep_for(milliseconds(5));
  }
}

// One side of a scenario as a running process. A model (a Python process) starts its measured run
// only when go() is called, after its start-up; a preset starts it at once. Scenarios start
// models first and call go() last, so both sides measure the same stretch of time.
class RunningWorkload {
 public:
  RunningWorkload(const DemoOptions& o, const WorkloadSpec& spec, double duration_s,
                  const std::string& notify, const std::string& ready_name)
      : spec_(spec),
        ready_(spec.model() ? o.work_dir + "/" + ready_name + ".ready" : std::string()),
        child_(workload_argv({o.workload_program, o.python_program}, spec, duration_s, notify,
                             ready_)) {
    if (spec_.model()) {
      wait_until_ready(child_, ready_, kModelReadyTimeoutS);
    } else if (spec_.side == Side::kOffline) {
      wait_for_queues(child_);
    }
  }
  void go() {
    if (!ready_.empty()) release(ready_);
  }
  ChildProcess& child() { return child_; }
  nlohmann::json finish() { return demo::finish(child_); }

 private:
  WorkloadSpec spec_;
  std::string ready_;
  ChildProcess child_;
};

}  // namespace

DemoResult run_demo(const DemoOptions& o, const std::function<void(const std::string&)>& progress) {
  DemoResult result;
  const double both = o.duration_s + kOfflineTailS;
  const WorkloadSpec online{o.online_preset, Side::kOnline, o.online_batch};
  const WorkloadSpec offline{o.offline_preset, Side::kOffline, o.offline_batch};
  // A preset online side starts right after the offline one; a model starts first (its start-up
  // takes seconds) and waits for go().
  auto start_online = [&](const std::string& notify) {
    return std::make_unique<RunningWorkload>(o, online, o.duration_s, notify, "online");
  };

  progress("online_alone: " + o.online_preset + " for " + secs_arg(o.duration_s) + " s");
  {
    auto on = start_online("");
    on->go();
    result.scenarios.push_back({"online_alone", on->finish(), std::nullopt});
  }

  progress("offline_alone: " + o.offline_preset + " for " + secs_arg(o.duration_s) + " s");
  {
    RunningWorkload off(o, offline, o.duration_s, "", "offline");
    off.go();
    result.scenarios.push_back({"offline_alone", std::nullopt, off.finish()});
  }

  progress("no_control: both together, nothing done");
  {
    std::unique_ptr<RunningWorkload> on;
    if (online.model()) on = start_online("");
    RunningWorkload off(o, offline, both, "", "offline");
    off.go();
    if (on)
      on->go();
    else
      on = start_online("");
    auto on_result = on->finish();
    result.scenarios.push_back({"no_control", on_result, off.finish()});
  }

  progress("gpreempt: both together, offline suspended while online requests run");
  {
    gpreempt_ctx_opts opts{};
    opts.sz = sizeof opts;
    gpreempt_ctx* ctx = nullptr;
    if (int rc = gpreempt_ctx_open(&opts, &ctx); rc < 0)
      throw Error(-rc, std::string("gpreempt_ctx_open: ") + gpreempt_last_error());
    std::unique_ptr<gpreempt_ctx, void (*)(gpreempt_ctx*)> ctx_guard(ctx, gpreempt_ctx_close);

    const std::string socket = o.work_dir + "/controller.sock";
    // A model online side connects to the controller only at go(), after the controller listens.
    std::unique_ptr<RunningWorkload> on;
    if (online.model()) on = start_online(socket);
    RunningWorkload off(o, offline, both, "", "offline");
    gpreempt_target* target = nullptr;
    if (int rc = gpreempt_attach(ctx, off.child().pid(), &target); rc < 0)
      throw Error(-rc, "attach to the offline job: " + std::string(gpreempt_last_error()));

    PreemptionController controller(target, o.controller, socket);
    controller.start();
    off.go();
    if (on)
      on->go();
    else
      on = start_online(socket);
    auto on_result = on->finish();
    result.preemption = controller.stop();
    // Detach before the offline job ends: nothing may stay suspended, and its exit status
    // belongs to us, not to the tracer.
    if (int rc = gpreempt_detach(target); rc < 0)
      result.preemption.errors.push_back(std::string("detach: ") + gpreempt_last_error());
    result.scenarios.push_back({"gpreempt", on_result, off.finish()});
  }
  return result;
}

}  // namespace gpreempt::demo
