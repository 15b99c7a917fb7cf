// The Scheduler decides the same in the DES as when the same events are fed straight into one:
// the DES adds no policy of its own. Record what the DES fed, replay it, compare the actions.
#include <gtest/gtest.h>

#include <sstream>

#include "eval/des/scheduler_setup.h"
#include "eval/des/simulation.h"
#include "points.h"
#include "sched/scheduler.h"

namespace gpreempt::eval::des {
namespace {

std::string text(const sched::Action& a) {
  std::ostringstream o;
  if (const auto* s = std::get_if<sched::action::Suspend>(&a)) {
    o << "suspend#" << s->id << " gpu" << s->gpu << " grace" << s->grace.count() << " "
      << sched::to_string(s->reason);
    for (const auto& k : s->targets) o << " " << sched::to_string(k);
  } else if (const auto* r = std::get_if<sched::action::Resume>(&a)) {
    o << "resume#" << r->id << " gpu" << r->gpu << " " << sched::to_string(r->reason);
    for (const auto& k : r->targets) o << " " << sched::to_string(k);
  } else if (const auto* t = std::get_if<sched::action::ArmTimer>(&a)) {
    o << "timer " << (t->at ? std::to_string(t->at->count()) : "none");
  } else {
    o << "priority-only";
  }
  return o.str();
}

class Recorder : public Observer {
 public:
  void scheduler_event(sched::Time t, const sched::Event& e) override { events.emplace_back(t, e); }
  void scheduler_actions(sched::Time, const std::vector<sched::Action>& a) override {
    std::string s;
    for (const auto& x : a) s += text(x) + "; ";
    actions.push_back(s);
  }
  std::vector<std::pair<sched::Time, sched::Event>> events;
  std::vector<std::string> actions;
};

void replay_matches(const std::string& baseline) {
  const Spec spec = testing::small_spec(baseline, 100);
  Recorder rec;
  (void)run_simulation(spec, &rec);
  ASSERT_GT(rec.events.size(), 100u);
  const auto trigger = baseline == "gpreempt-transparent" ? sched::RequestSource::kTransparent
                                                          : sched::RequestSource::kHint;
  sched::Scheduler fresh(scheduler_classes(trigger, spec.policy), arbiter_config(spec.policy));
  std::size_t suspends = 0;
  for (std::size_t i = 0; i < rec.events.size(); ++i) {
    std::string s;
    for (const auto& x : fresh.on_event(rec.events[i].first, rec.events[i].second)) s += text(x) + "; ";
    ASSERT_EQ(s, rec.actions[i]) << baseline << ": event " << i;
    suspends += s.find("suspend#") != std::string::npos;
  }
  EXPECT_GT(suspends, 10u);
}

TEST(DesSameDecisions, HintReplayGivesTheSameActions) { replay_matches("gpreempt-hint"); }
TEST(DesSameDecisions, EarlyReplayGivesTheSameActions) { replay_matches("gpreempt-early"); }
TEST(DesSameDecisions, TransparentReplayGivesTheSameActions) { replay_matches("gpreempt-transparent"); }

}  // namespace
}  // namespace gpreempt::eval::des
