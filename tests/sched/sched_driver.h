// A fake-clock driver for lib/sched's Scheduler: feeds events at chosen times, fires the timer the
// scheduler asks for as time advances, and renders actions as short strings so a test reads as
// the sequence it expects ("suspend gpu1 [20@1] grace=0us request").
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "sched/scheduler.h"

namespace gpreempt::sched::testing {

using namespace std::chrono_literals;

inline std::string keys(const std::vector<ProcessKey>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + to_string(v[i]);
  return s + "]";
}

inline std::string describe(const Action& a) {
  if (auto* s = std::get_if<action::Suspend>(&a))
    return "suspend gpu" + std::to_string(s->gpu) + " " + keys(s->targets) + " grace=" +
           std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(s->grace).count()) +
           "us " + to_string(s->reason);
  if (auto* r = std::get_if<action::Resume>(&a))
    return "resume gpu" + std::to_string(r->gpu) + " " + keys(r->targets) + " " +
           to_string(r->reason);
  if (auto* p = std::get_if<action::PriorityOnly>(&a)) {
    std::string s = "priority-only gpu" + std::to_string(p->gpu);
    for (auto& [k, q] : p->queue_priorities) s += " " + to_string(k) + "=" + std::to_string(q);
    return s;
  }
  return "timer";
}

inline std::vector<SchedClass> two_classes() {
  SchedClass online{"online", 10, {RequestSource::kHint, RequestSource::kTransparent}, std::nullopt};
  SchedClass offline{"offline", 0, {RequestSource::kHint}, std::nullopt};
  return {online, offline};
}

class Driver {
 public:
  explicit Driver(ArbiterConfig config = {}, std::vector<SchedClass> classes = two_classes())
      : s(std::move(classes), config) {}

  // Feeds one event now; returns the non-timer actions, remembering Suspend/Resume in flight.
  std::vector<std::string> send(const Event& e) {
    std::vector<std::string> out;
    for (auto& a : s.on_event(now, e)) {
      if (auto* t = std::get_if<action::ArmTimer>(&a)) {
        timer = t->at;
        continue;
      }
      if (auto* sp = std::get_if<action::Suspend>(&a)) last_suspend[sp->gpu] = *sp;
      if (auto* r = std::get_if<action::Resume>(&a)) last_resume[r->gpu] = *r;
      out.push_back(describe(a));
      log.push_back(std::to_string(now.count() / 1000) + "us " + out.back());
    }
    return out;
  }

  // Moves the clock forward by `d`, firing every timer that comes due on the way.
  std::vector<std::string> advance(Duration d) { return advance_to(now + d); }
  std::vector<std::string> advance_to(Time t) {
    std::vector<std::string> out;
    int firings_now = 0;
    while (timer && *timer <= t) {
      // A scheduler that keeps asking for a time already reached would spin here for ever.
      firings_now = *timer <= now ? firings_now + 1 : 0;
      if (firings_now > 1000) {
        ADD_FAILURE() << "the timer keeps firing at " << now.count() << " ns without progress";
        break;
      }
      now = std::max(now, *timer);
      timer.reset();
      for (auto& x : send(event::TimerFired{})) out.push_back(x);
    }
    now = t;
    return out;
  }

  std::vector<std::string> classify(int pid, const std::string& cls, std::vector<GpuId> gpus,
                                    uint64_t start = 1) {
    return send(event::ProcessClassified{ProcessKey{pid, start}, cls, std::move(gpus)});
  }
  std::vector<std::string> begin(int pid, uint64_t request = 1, uint64_t start = 1,
                                 RequestSource src = RequestSource::kHint) {
    return send(event::RequestStarted{ProcessKey{pid, start}, request, src});
  }
  std::vector<std::string> end(int pid, uint64_t request = 1, uint64_t start = 1,
                               RequestSource src = RequestSource::kHint) {
    return send(event::RequestFinished{ProcessKey{pid, start}, request, src});
  }
  // An LLM request's tokens so far (1: its first token); `at_end`: the count its end gives.
  std::vector<std::string> tokens(int pid, uint64_t request, uint64_t n, bool at_end = false,
                                  uint64_t start = 1) {
    return send(event::RequestProgress{ProcessKey{pid, start}, request, n, at_end});
  }
  // Answers the last Suspend (or Resume) of `gpu`: every target with `outcome`.
  std::vector<std::string> complete_suspend(GpuId gpu,
                                            event::Outcome outcome = event::Outcome::kDone,
                                            int error = 0) {
    const auto& a = last_suspend.at(gpu);
    return send(completion(a.id, gpu, a.targets, outcome, error));
  }
  std::vector<std::string> complete_resume(GpuId gpu,
                                           event::Outcome outcome = event::Outcome::kDone) {
    const auto& a = last_resume.at(gpu);
    return send(completion(a.id, gpu, a.targets, outcome, 0));
  }
  static event::ActuationCompleted completion(uint64_t id, GpuId gpu,
                                              const std::vector<ProcessKey>& targets,
                                              event::Outcome outcome, int error) {
    event::ActuationCompleted c{id, gpu, {}};
    for (const auto& k : targets) c.outcomes.push_back({k, outcome, error});
    return c;
  }
  MemberState state(GpuId gpu, int pid, uint64_t start = 1) const {
    return s.gpu(gpu)->members().at(ProcessKey{pid, start}).state;
  }

  Scheduler s;
  Time now{0};
  std::optional<Time> timer;
  std::map<GpuId, action::Suspend> last_suspend;
  std::map<GpuId, action::Resume> last_resume;
  std::vector<std::string> log;
};

using Strings = std::vector<std::string>;

}  // namespace gpreempt::sched::testing
