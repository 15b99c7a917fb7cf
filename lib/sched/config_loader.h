// The config loader's state, shared by the files that read each part of the file: config.cpp
// (the file as a whole), config_policy.cpp ([policy]) and config_classes.cpp ([[class]]). Internal
// to lib/sched: the interface is config.h.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/config.h"
#include "sched/toml_fields.h"

namespace gpreempt::sched::config_loading {

class Loader : TomlFields {
 public:
  explicit Loader(std::string file, std::vector<std::string> other_tables)
      : TomlFields(std::move(file)), other_tables_(std::move(other_tables)) {}

  ConfigResult run(std::string_view text);

 private:
  // "[[class]], [policy] or [daemon]"
  std::string expected() const;
  std::optional<Glob> glob(const toml::key& k, const toml::node& v);
  // time_slice = { online_ms = 50, offline_ms = 50 }: one `<class>_ms` key per class taking turns;
  // for every GPU (`gpu` nullopt) or for one ([[policy.gpu]], where {} means none there).
  void time_slice(const toml::key& k, const toml::node& v, std::optional<GpuId> gpu);
  // [[policy.gpu]]: gpu_id = N and what that GPU does differently (its time_slice).
  void gpus(const toml::key& k, const toml::node& v);
  // Needs the classes, which may come after [policy] in the file.
  void check_time_slices(Config& c);
  void policy(const toml::table& t, Config& c);
  std::vector<ClassRule> classes(const toml::key& k, const toml::node& v);
  // slo = { p99_ms = 5, window_s = 10 }: exactly one percentile key (p50_ms, p90_ms, p95_ms,
  // p99_ms, p999_ms) and an optional window (default 10 s).
  std::optional<Objective> objective(const toml::key& k, const toml::node& v);
  void trigger(const toml::key& k, const toml::node& v, std::vector<RequestSource>& out);
  void match(const toml::key& k, const toml::node& v, std::vector<MatchRule>& out);
  void match_key(const toml::key& k, const toml::node& v, MatchRule& m);
  // A class that may preempt another matches only what a process cannot set itself
  // (class_trust.h), unless the node is declared single-tenant.
  void check_trust(const Config& c);

  std::vector<std::string> other_tables_;  // the caller's, neither read nor refused here
  int single_tenant_line_ = 0;
  // The line of each match table of each [[class]], in file order (check_trust's error lines).
  std::vector<std::vector<int>> class_match_lines_;
  std::vector<int> current_match_lines_;
  struct SliceSet {
    int line = 0;              // of the time_slice key
    std::optional<GpuId> gpu;  // nullopt: every GPU
    std::vector<TimeSlice> slices;
    std::map<std::string, int> lines;  // class → line of its key
    bool bad = false;                  // a key was already reported
  };
  std::vector<SliceSet> slice_sets_;
};

}  // namespace gpreempt::sched::config_loading
