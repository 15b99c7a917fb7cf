// A fake sched::ActuatorPort for tests: it keeps each action until the test answers it, and which
// (process, GPU) pairs it has suspended. It keeps the port's contract (lib/sched/actuator_port.h),
// which tests/eval_des/test_actuator_contract.cpp checks of it as of the shipped actuators.
#pragma once

#include <deque>
#include <functional>
#include <set>
#include <utility>
#include <vector>

#include "sched/actuator_port.h"
#include "sched/event.h"

namespace gpreempt::testing {

class FakeActuator final : public sched::ActuatorPort {
 public:
  using Complete = std::function<void(const sched::event::ActuationCompleted&)>;
  struct Pending {
    bool suspend = true;
    uint64_t id = 0;
    sched::GpuId gpu = 0;
    std::vector<sched::ProcessKey> targets;
  };

  explicit FakeActuator(Complete complete) : complete_(std::move(complete)) {}

  void suspend(sched::Time, const sched::action::Suspend& a) override {
    pending.push_back({true, a.id, a.gpu, a.targets});
  }
  void resume(sched::Time, const sched::action::Resume& a) override {
    pending.push_back({false, a.id, a.gpu, a.targets});
  }

  // Carries out and answers the oldest action: each target done, or gone if it exited.
  Pending answer_next() {
    Pending p = pending.front();
    pending.pop_front();
    sched::event::ActuationCompleted c{p.id, p.gpu, {}};
    for (const auto& k : p.targets) {
      if (gone_.count(k)) {
        c.outcomes.push_back({k, sched::event::Outcome::kGone, 0});
        continue;
      }
      if (p.suspend)
        suspended_.insert({k, p.gpu});
      else
        suspended_.erase({k, p.gpu});
      c.outcomes.push_back({k, sched::event::Outcome::kDone, 0});
    }
    complete_(c);
    return p;
  }
  void answer_all() {
    while (!pending.empty()) answer_next();
  }
  // The process is gone: its queues with it.
  void exit(const sched::ProcessKey& k) {
    gone_.insert(k);
    for (auto it = suspended_.begin(); it != suspended_.end();)
      it = it->first == k ? suspended_.erase(it) : std::next(it);
  }
  bool is_suspended(const sched::ProcessKey& k, sched::GpuId gpu) const {
    return suspended_.count({k, gpu}) != 0;
  }

  std::deque<Pending> pending;

 private:
  Complete complete_;
  std::set<sched::ProcessKey> gone_;
  std::set<std::pair<sched::ProcessKey, sched::GpuId>> suspended_;
};

}  // namespace gpreempt::testing
