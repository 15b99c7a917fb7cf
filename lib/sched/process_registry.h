// The processes the scheduling runtime knows: the one registry gpreemptd and the DES keep
// (docs/architecture.md#one-process-registry). One record per process, keyed by ProcessKey
// ({pid, start time}), holding what the scheduler decides with (its class, its GPUs, its open
// requests) and what discovery read of it (ProcessDescription: what the status document shows).
//
// Pid reuse is decided here and nowhere else: a process that arrives with a pid a live record
// holds under another start time displaces it (displaced_by), and the caller retires the old one
// (Runtime::dispatch ends it as if it had exited) before admitting the new one. Lookups by pid
// (with_pid) therefore name at most one process.
//
// Other threads keep what they own of a process under the same key — discovery's memory of its
// last pass, each control thread's debug attachments — but no one else keeps a process table.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/event.h"
#include "sched/process_key.h"
#include "sched/request_tokens.h"
#include "sched/sched_class.h"
#include "sched/time.h"
#include "sched/usage_stats.h"

namespace gpreempt::sched {

// A request of the process that began from a source its class accepts and has not finished.
struct OpenRequest {
  Time started;
  RequestSource source;
  RequestTokens tokens;  // what its client reported of its tokens (LLM requests)
};

struct ProcessRecord {
  ProcessKey key;
  // The class discovery gave it (nullopt: matched no rule, left alone) and the configured class
  // of that name (nullptr: none, or no class of that name after a reload).
  std::optional<std::string> class_name;
  const SchedClass* cls = nullptr;
  std::vector<GpuId> gpus;  // sorted, unique
  std::map<uint64_t, OpenRequest> open_requests;
  ProcessDescription description;
  // What the scheduler did to it (Accounting), and the class those figures also count for: the
  // class it had when it was last classified into one (it stays after a reload removes it).
  UsageStats usage;
  std::optional<std::string> accounted_class;
};

class ProcessRegistry {
 public:
  using Records = std::map<ProcessKey, ProcessRecord>;

  // The live process `newcomer` displaces: the one holding its pid under another start time (the
  // pid was reused). nullopt: none.
  std::optional<ProcessKey> displaced_by(const ProcessKey& newcomer) const;
  // The record of `key`, created if new. Throws std::logic_error when another process holds its
  // pid: retire that one first (displaced_by).
  ProcessRecord& admit(const ProcessKey& key);
  void remove(const ProcessKey& key);

  const ProcessRecord* find(const ProcessKey& key) const;
  ProcessRecord* find(const ProcessKey& key);
  // The process holding `pid` now (nullptr: none).
  const ProcessRecord* with_pid(int pid) const;
  bool knows(const ProcessKey& key) const { return records_.count(key) != 0; }

  const Records& all() const { return records_; }
  Records& all() { return records_; }
  std::size_t size() const { return records_.size(); }

 private:
  Records records_;
  std::map<int, ProcessKey> by_pid_;
};

}  // namespace gpreempt::sched
