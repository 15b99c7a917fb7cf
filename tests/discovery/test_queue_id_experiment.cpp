#include <gtest/gtest.h>

#include "discovery/proc_parse.h"
#include "discovery/queue_id_experiment.h"

using namespace gpreempt::discovery;

namespace {
ModelRun run(const char* model, int n, int pid, std::vector<std::uint32_t> ids, std::uint64_t ring0 = 0) {
  ModelRun r{model, n, pid, {}};
  for (auto id : ids) {
    QueueIdentity q{id, 0xf7bc, "compute", {}};
    if (ring0) q.ring_base = ring0 + id * 0x100000;
    r.queues.push_back(q);
  }
  return r;
}
}  // namespace

TEST(QueueIdExperiment, StableSameIdsDifferentQueues) {
  auto a = answer_queue_id_experiment({run("A", 1, 10, {0, 1}), run("A", 2, 11, {0, 1})},
                                      {run("A", 0, 20, {0, 1}, 0x7f0000000000)},
                                      {run("B", 0, 21, {0, 1}, 0x7e0000000000)});
  EXPECT_TRUE(a.ids_stable);
  EXPECT_FALSE(a.models_differ.value());
  EXPECT_TRUE(a.ids_overlap_together.value());
  EXPECT_FALSE(a.identities_overlap_together.value());
  ASSERT_EQ(a.explanation.size(), 3u);
  EXPECT_NE(a.explanation[2].find("(pid, queue id) or (gpu, ring base)"), std::string::npos);
}

TEST(QueueIdExperiment, UnstableAndDifferentAndSharedRing) {
  auto a = answer_queue_id_experiment({run("A", 1, 10, {0, 1}), run("A", 2, 11, {0, 1, 2})},
                                      {run("A", 0, 20, {0}, 0x7f0000000000)},
                                      {run("B", 0, 21, {3}, 0x7f0000000000 - 3 * 0x100000)});
  EXPECT_FALSE(a.ids_stable);
  EXPECT_TRUE(a.models_differ.value());
  EXPECT_FALSE(a.ids_overlap_together.value());
  EXPECT_TRUE(a.identities_overlap_together.value());  // same (gpu, ring base): flagged, not hidden
  auto solo_only = answer_queue_id_experiment({run("A", 1, 10, {0})}, {}, {});
  EXPECT_TRUE(solo_only.ids_stable);
  EXPECT_FALSE(solo_only.models_differ.has_value());
}

TEST(QueueIdExperiment, ParentPidFromStat) {
  EXPECT_EQ(parse_stat_ppid("4242 (python3) S 4200 4242 4200 0 -1").value(), 4200);
  EXPECT_EQ(parse_stat_ppid("77 (a) b) c) R 1 77 77 0").value(), 1);  // ')' inside comm
  EXPECT_FALSE(parse_stat_ppid("garbage").has_value());
}
