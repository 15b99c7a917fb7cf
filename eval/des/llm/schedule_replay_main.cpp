// gpreempt-llm-schedule: the DES's LLM scheduler (scheduler.h) run over a request script with a
// fake clock, printing the steps it forms. Not a user tool: tests/python/test_llm_des_parity.py
// runs the same script through the live server's Python scheduler (gpreempt.sim.llm.server.serve)
// and compares the two step sequences, so that the two implementations stay one behaviour.
//
// SCRIPT (JSON): {"kv_blocks": 40, "block_size": 16, "max_num_seqs": 4,
//   "max_num_batched_tokens": 64, "step_base": 100, "step_per_token": 2,
//   "requests": [[arrival, prompt_tokens, output_tokens], ...]}
// Times are integers in any unit; a step of T tokens takes step_base + step_per_token × T.
// Output: {"steps": [{"end": t, "work": [[request, n_new, ctx, samples], ...], "preempted": [...]}]}
// The loop is server.serve's: requests that have arrived by `now` join before each step; an idle
// server jumps to the next arrival.
#include <algorithm>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "eval/des/llm/scheduler.h"

namespace llm = gpreempt::eval::des::llm;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gpreempt-llm-schedule SCRIPT.json\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "gpreempt-llm-schedule: cannot read " << argv[1] << "\n";
    return 1;
  }
  const auto s = nlohmann::json::parse(in);
  std::vector<llm::Request> reqs;
  for (const auto& r : s.at("requests")) {
    llm::Request q;
    q.id = static_cast<uint32_t>(reqs.size());
    q.arrival = r.at(0).get<int64_t>();
    q.prompt_len = r.at(1).get<uint32_t>();
    q.output_len = r.at(2).get<uint32_t>();
    reqs.push_back(q);
  }
  // Arrival order, as serve() sorts them (stable: ties keep their index order).
  std::vector<uint32_t> order(reqs.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return reqs[a].arrival < reqs[b].arrival; });
  llm::Scheduler sched(reqs, llm::KvBlocks(s.at("kv_blocks").get<uint64_t>(), s.at("block_size").get<uint32_t>()),
                       llm::Limits{s.at("max_num_seqs").get<uint32_t>(), s.at("max_num_batched_tokens").get<uint32_t>()});
  const int64_t base = s.at("step_base").get<int64_t>(), per_token = s.at("step_per_token").get<int64_t>();
  int64_t now = 0;
  std::size_t next = 0;
  nlohmann::json steps = nlohmann::json::array();
  while (next < order.size() || !sched.idle()) {
    while (next < order.size() && reqs[order[next]].arrival <= now) sched.add(order[next++]);
    if (sched.idle()) {
      now = reqs[order[next]].arrival;
      continue;
    }
    const llm::Batch b = sched.schedule();
    if (b.work.empty()) {
      std::cerr << "gpreempt-llm-schedule: an empty step with requests waiting\n";
      return 1;
    }
    now += base + per_token * b.tokens();
    sched.complete(b, now);
    nlohmann::json work = nlohmann::json::array();
    for (const auto& w : b.work) work.push_back({w.request, w.n_new, w.ctx, w.samples});
    steps.push_back({{"end", now}, {"work", work}, {"preempted", b.preempted}});
  }
  std::cout << nlohmann::json{{"steps", steps}}.dump() << "\n";
  return 0;
}
