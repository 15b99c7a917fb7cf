#include "discovery/queue_id_experiment.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace gpreempt::discovery {

namespace {

using Key = std::tuple<std::uint32_t, std::uint32_t, std::string>;  // (id, gpu, type)

std::set<Key> keys(const std::vector<ModelRun>& runs) {
  std::set<Key> s;
  for (const auto& r : runs)
    for (const auto& q : r.queues) s.insert({q.queue_id, q.gpu_id, q.type});
  return s;
}

std::set<std::uint32_t> ids(const std::vector<ModelRun>& runs) {
  std::set<std::uint32_t> s;
  for (const auto& r : runs)
    for (const auto& q : r.queues) s.insert(q.queue_id);
  return s;
}

}  // namespace

QueueIdAnswers answer_queue_id_experiment(const std::vector<ModelRun>& solo, const std::vector<ModelRun>& ta,
                                          const std::vector<ModelRun>& tb) {
  QueueIdAnswers a;
  // Stable: every run's own set equals the first run's.
  std::optional<std::set<Key>> first;
  a.ids_stable = !solo.empty();
  for (int run = 1;; ++run) {
    std::vector<ModelRun> this_run;
    for (const auto& r : solo)
      if (r.run == run) this_run.push_back(r);
    if (this_run.empty()) break;
    const auto k = keys(this_run);
    if (!first)
      first = k;
    else if (k != *first)
      a.ids_stable = false;
  }
  a.explanation.push_back(
      a.ids_stable ? "The model got the same queue ids in every run: KFD hands out ids per process from 0, "
                     "lowest free first, so a program that creates its queues in the same order gets the same ids."
                   : "The model's queue ids changed between runs (queues are created lazily: a different "
                     "order or number of streams/kernels gives different ids).");
  if (!ta.empty() && !tb.empty()) {
    a.models_differ = keys(ta) != keys(tb);
    const auto ia = ids(ta), ib = ids(tb);
    std::vector<std::uint32_t> common;
    std::set_intersection(ia.begin(), ia.end(), ib.begin(), ib.end(), std::back_inserter(common));
    a.ids_overlap_together = !common.empty();
    bool identity_overlap = false;
    for (const auto& ra : ta)
      for (const auto& rb : tb)
        for (const auto& qa : ra.queues)
          for (const auto& qb : rb.queues) {
            if (ra.pid == rb.pid && qa.queue_id == qb.queue_id) identity_overlap = true;
            if (qa.ring_base && qb.ring_base && qa.gpu_id == qb.gpu_id && *qa.ring_base == *qb.ring_base)
              identity_overlap = true;
          }
    a.identities_overlap_together = identity_overlap;
    a.explanation.push_back(*a.models_differ
                                ? "The two models' (id, gpu, type) sets differ."
                                : "The two models show the same (id, gpu, type) set — not because they share "
                                  "queues, but because ids are numbered per process.");
    a.explanation.push_back(
        std::string(*a.ids_overlap_together ? "Run together, the same numeric ids appear in both processes; "
                                            : "Run together, no numeric id appears in both processes; ") +
        (identity_overlap ? "and some (pid, id) or (gpu, ring base) is shared — two processes on one queue, "
                            "which KFD does not do: check the capture."
                          : "no (pid, queue id) or (gpu, ring base) is shared: they never use the same queue. "
                            "The identity of a queue is (pid, queue id) or (gpu, ring base), never the id alone."));
  }
  return a;
}

}  // namespace gpreempt::discovery
