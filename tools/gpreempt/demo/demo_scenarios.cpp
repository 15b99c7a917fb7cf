#include "demo/demo_scenarios.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "common/child_process.h"
#include "common/error.h"

namespace gpreempt::demo {

namespace {

// The offline job gets this much longer than the online one, so that it is still running (and
// attached) when the online run ends, whatever the start-up order.
constexpr double kOfflineTailS = 1.0;

std::string secs_arg(double s) { return std::to_string(s); }

std::vector<std::string> online_argv(const DemoOptions& o, const std::string& notify) {
  std::vector<std::string> a = {o.workload_program, "online",  "--preset", o.online_preset,
                                "--duration",       secs_arg(o.duration_s), "--json"};
  if (!notify.empty()) a.insert(a.end(), {"--notify", notify, "--notify-wait"});
  return a;
}

std::vector<std::string> offline_argv(const DemoOptions& o, double duration) {
  return {o.workload_program, "offline", "--preset", o.offline_preset,
          "--duration",       secs_arg(duration), "--json"};
}

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
// then would measure start-up, not interference.
void wait_for_queues(const ChildProcess& child) {
  using namespace std::chrono;
  const auto deadline = steady_clock::now() + std::chrono::seconds(10);
  while (gpreempt_find_queues_by_process(child.pid(), nullptr, 0) <= 0) {
    if (steady_clock::now() > deadline)
      throw Error(ETIMEDOUT, "'" + child.command_line() + "' created no KFD queue within 10 s");
    std::this_thread::sleep_for(milliseconds(5));
  }
}

}  // namespace

DemoResult run_demo(const DemoOptions& o, const std::function<void(const std::string&)>& progress) {
  DemoResult result;
  const double both = o.duration_s + kOfflineTailS;

  progress("online_alone: " + o.online_preset + " for " + secs_arg(o.duration_s) + " s");
  {
    ChildProcess online(online_argv(o, ""));
    result.scenarios.push_back({"online_alone", finish(online), std::nullopt});
  }

  progress("offline_alone: " + o.offline_preset + " for " + secs_arg(o.duration_s) + " s");
  {
    ChildProcess offline(offline_argv(o, o.duration_s));
    result.scenarios.push_back({"offline_alone", std::nullopt, finish(offline)});
  }

  progress("no_control: both together, nothing done");
  {
    ChildProcess offline(offline_argv(o, both));
    wait_for_queues(offline);
    ChildProcess online(online_argv(o, ""));
    auto on = finish(online);
    result.scenarios.push_back({"no_control", on, finish(offline)});
  }

  progress("gpreempt: both together, offline suspended while online requests run");
  {
    gpreempt_ctx_opts opts{};
    opts.sz = sizeof opts;
    gpreempt_ctx* ctx = nullptr;
    if (int rc = gpreempt_ctx_open(&opts, &ctx); rc < 0)
      throw Error(-rc, std::string("gpreempt_ctx_open: ") + gpreempt_last_error());
    std::unique_ptr<gpreempt_ctx, void (*)(gpreempt_ctx*)> ctx_guard(ctx, gpreempt_ctx_close);

    ChildProcess offline(offline_argv(o, both));
    wait_for_queues(offline);
    gpreempt_target* target = nullptr;
    if (int rc = gpreempt_attach(ctx, offline.pid(), &target); rc < 0)
      throw Error(-rc, "attach to the offline job: " + std::string(gpreempt_last_error()));

    const std::string socket = o.work_dir + "/controller.sock";
    PreemptionController controller(target, o.controller, socket);
    controller.start();
    ChildProcess online(online_argv(o, socket));
    auto on = finish(online);
    result.preemption = controller.stop();
    // Detach before the offline job ends: nothing may stay suspended, and its exit status
    // belongs to us, not to the tracer.
    if (int rc = gpreempt_detach(target); rc < 0)
      result.preemption.errors.push_back(std::string("detach: ") + gpreempt_last_error());
    result.scenarios.push_back({"gpreempt", on, finish(offline)});
  }
  return result;
}

}  // namespace gpreempt::demo
