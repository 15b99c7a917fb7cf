// ProcessRegistry: one record per {pid, start time}, and the one place pid reuse is decided.
#include <gtest/gtest.h>

#include <stdexcept>

#include "sched/process_registry.h"

namespace gpreempt::sched {
namespace {

TEST(ProcessRegistry, APidUnderAnotherStartTimeDisplacesTheProcessThatHeldIt) {
  ProcessRegistry r;
  const ProcessKey old{42, 100}, successor{42, 200}, other{43, 100};
  r.admit(old).class_name = "offline";
  EXPECT_EQ(r.displaced_by(old), std::nullopt) << "the same process again";
  EXPECT_EQ(r.displaced_by(other), std::nullopt) << "another pid";
  EXPECT_EQ(r.displaced_by(successor), old);
  EXPECT_THROW(r.admit(successor), std::logic_error) << "the old one must be retired first";
  r.remove(old);
  EXPECT_EQ(r.displaced_by(successor), std::nullopt);
  ProcessRecord& s = r.admit(successor);
  EXPECT_EQ(s.key, successor);
  EXPECT_FALSE(s.class_name) << "nothing of the old process is inherited";
  EXPECT_EQ(r.with_pid(42), &s);
  EXPECT_EQ(r.size(), 1u);
}

TEST(ProcessRegistry, RemovingAProcessThatLostItsPidLeavesTheNewHolder) {
  ProcessRegistry r;
  const ProcessKey a{7, 1}, b{7, 2};
  r.admit(a);
  r.remove(a);
  r.admit(b);
  r.remove(a);  // a late second removal of the old key
  ASSERT_NE(r.with_pid(7), nullptr);
  EXPECT_EQ(r.with_pid(7)->key, b);
  EXPECT_TRUE(r.knows(b));
  EXPECT_FALSE(r.knows(a));
}

TEST(ProcessRegistry, AdmittingAKnownProcessKeepsItsRecord) {
  ProcessRegistry r;
  const ProcessKey k{9, 3};
  r.admit(k).gpus = {1, 2};
  EXPECT_EQ(r.admit(k).gpus, (std::vector<GpuId>{1, 2}));
  EXPECT_EQ(r.find(k)->gpus, (std::vector<GpuId>{1, 2}));
  EXPECT_EQ(r.find(ProcessKey{9, 4}), nullptr);
  EXPECT_EQ(r.with_pid(10), nullptr);
}

}  // namespace
}  // namespace gpreempt::sched
