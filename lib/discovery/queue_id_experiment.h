// The user's queue-id experiments (seed 000/002), answered from snapshots: are a model's queue
// ids stable across runs, do two models' queues differ, do they overlap when run together.
// Pure: the snapshots come from `gpreempt experiment queue-ids`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpreempt::discovery {

struct QueueIdentity {
  std::uint32_t queue_id = 0;
  std::uint32_t gpu_id = 0;
  std::string type;
  std::optional<std::uint64_t> ring_base;  // when debugfs was readable
};

// The queues one process of one model had at its busiest moment.
struct ModelRun {
  std::string model;  // "A" (--model) or "B" (--concurrent)
  int run = 0;        // 1-based; 0 = the concurrent run
  int pid = 0;
  std::vector<QueueIdentity> queues;
};

struct QueueIdAnswers {
  bool ids_stable = false;                        // A: same (id, gpu, type) set in every solo run
  std::optional<bool> models_differ;              // A vs B: different (id, gpu, type) sets
  std::optional<bool> ids_overlap_together;       // run together: the same numeric ids appear in both
  std::optional<bool> identities_overlap_together;  // run together: a (pid, id) or (gpu, ring) in both
  std::vector<std::string> explanation;
};

QueueIdAnswers answer_queue_id_experiment(const std::vector<ModelRun>& solo_runs_a,
                                          const std::vector<ModelRun>& together_a,
                                          const std::vector<ModelRun>& together_b);

}  // namespace gpreempt::discovery
