#include "eval/des/spec.h"

#include "eval/des/policy.h"

#include "sched/objective.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "sim/device/device_profile.h"
#include "sim/gpu/faults.h"
#include "sim/gpu/model_config.h"
#include "sim/gpu/profile.h"

namespace gpreempt::eval::des {

namespace {

using json = nlohmann::ordered_json;


std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

const char* type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

// A JSON object being read, with its path: every field taken is checked, and fields nobody took
// are errors (a misspelt key must not be silently ignored).
class Obj {
 public:
  Obj(const json& v, std::string path) : v_(v), path_(std::move(path)) {
    if (!v_.is_object()) throw SpecError(where(), std::string("expected an object, got ") + type_name(v_));
  }
  ~Obj() = default;

  std::string where() const { return path_.empty() ? "spec" : path_; }
  std::string at(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  bool has(const std::string& key) {
    seen_.insert(key);
    auto it = v_.find(key);
    return it != v_.end() && !it->is_null();
  }
  const json& raw(const std::string& key) {
    seen_.insert(key);
    return v_.at(key);
  }
  double number(const std::string& key, double dflt, double lo, double hi) {
    if (!has(key)) return dflt;
    return number_at(v_.at(key), at(key), lo, hi);
  }
  static double number_at(const json& v, const std::string& path, double lo, double hi) {
    if (!v.is_number()) throw SpecError(path, std::string("expected a number, got ") + type_name(v));
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < lo || d > hi)
      throw SpecError(path, "expected a number in [" + fmt(lo) + ", " + fmt(hi) + "], got " + v.dump());
    return d;
  }
  uint64_t integer(const std::string& key, uint64_t dflt, uint64_t lo, uint64_t hi) {
    if (!has(key)) return dflt;
    const json& v = v_.at(key);
    if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() < 0))
      throw SpecError(at(key), std::string("expected a non-negative integer, got ") + v.dump());
    const uint64_t n = v.get<uint64_t>();
    if (n < lo || n > hi)
      throw SpecError(at(key), "expected an integer in [" + std::to_string(lo) + ", " +
                                   std::to_string(hi) + "], got " + v.dump());
    return n;
  }
  std::string string(const std::string& key, const std::string& dflt, bool required = false) {
    if (!has(key)) {
      if (required) throw SpecError(at(key), "required");
      return dflt;
    }
    const json& v = v_.at(key);
    if (!v.is_string()) throw SpecError(at(key), std::string("expected a string, got ") + type_name(v));
    return v.get<std::string>();
  }
  bool boolean(const std::string& key, bool dflt) {
    if (!has(key)) return dflt;
    const json& v = v_.at(key);
    if (!v.is_boolean()) throw SpecError(at(key), std::string("expected true or false, got ") + type_name(v));
    return v.get<bool>();
  }
  // Every key of the object must have been taken.
  void done() const {
    for (auto it = v_.begin(); it != v_.end(); ++it)
      if (!seen_.count(it.key())) throw SpecError(at(it.key()), "unknown field");
  }
  static std::string fmt(double d) {
    if (d >= 1e300) return "inf";
    std::string s = std::to_string(d);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }

 private:
  const json& v_;
  std::string path_;
  std::set<std::string> seen_;
};

constexpr double kInf = 1e300;

std::vector<uint32_t> read_gpus(Obj& o, uint32_t gpus) {
  std::vector<uint32_t> out;
  const bool one = o.has("gpu");
  const bool many = o.has("gpus");
  if (one && many) throw SpecError(o.at("gpus"), "give either gpu or gpus, not both");
  if (many) {
    const json& v = o.raw("gpus");
    if (!v.is_array() || v.empty())
      throw SpecError(o.at("gpus"), "expected a non-empty array of GPU indices");
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string p = o.at("gpus") + "[" + std::to_string(i) + "]";
      if (!v[i].is_number_integer() || v[i].get<int64_t>() < 0)
        throw SpecError(p, "expected a GPU index, got " + v[i].dump());
      out.push_back(v[i].get<uint32_t>());
    }
  } else {
    out.push_back(static_cast<uint32_t>(o.integer("gpu", 0, 0, 1u << 20)));
  }
  std::set<uint32_t> seen;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::string p = many ? o.at("gpus") + "[" + std::to_string(i) + "]" : o.at("gpu");
    if (out[i] >= gpus)
      throw SpecError(p, "GPU " + std::to_string(out[i]) + " does not exist (gpus is " +
                             std::to_string(gpus) + ": indices 0.." + std::to_string(gpus - 1) + ")");
    if (!seen.insert(out[i]).second) throw SpecError(p, "GPU " + std::to_string(out[i]) + " listed twice");
  }
  return out;
}

// A file named in the spec, relative to the spec's directory.
std::string resolved(const std::string& file, const std::string& base_dir) {
  std::filesystem::path path(file);
  if (path.is_relative() && !base_dir.empty()) return (std::filesystem::path(base_dir) / path).string();
  return file;
}

ProgramDef read_program(Obj& o, const std::string& base_dir) {
  ProgramDef p;
  const bool k = o.has("kernels");
  const bool t = o.has("trace");
  if (k == t) throw SpecError(o.where(), "give exactly one of kernels or trace");
  if (t) {
    p.trace = o.string("trace", "");
    if (p.trace.empty()) throw SpecError(o.at("trace"), "expected a path");
    p.trace = resolved(p.trace, base_dir);
    return p;
  }
  const json& v = o.raw("kernels");
  if (!v.is_array() || v.empty()) throw SpecError(o.at("kernels"), "expected a non-empty array of kernels");
  for (std::size_t i = 0; i < v.size(); ++i) {
    Obj kd(v[i], o.at("kernels") + "[" + std::to_string(i) + "]");
    KernelDef d;
    d.name = kd.string("name", "kernel" + std::to_string(i));
    if (kd.has("workgroups")) {
      d.workgroups = kd.integer("workgroups", 1, 1, 1ull << 32);
      if (!kd.has("wg_cost_us")) throw SpecError(kd.at("wg_cost_us"), "required with workgroups");
      d.wg_cost_us = kd.number("wg_cost_us", 0, 0.001, 1e9);
      if (kd.has("duration_us")) throw SpecError(kd.at("duration_us"), "give duration_us or workgroups, not both");
    } else {
      if (!kd.has("duration_us")) throw SpecError(kd.at("duration_us"), "required");
      d.duration_us = kd.number("duration_us", 0, 0.001, 1e9);
    }
    if (kd.has("cus")) d.cus = static_cast<uint32_t>(kd.integer("cus", 0, 1, 100000));
    d.rounds = static_cast<uint32_t>(kd.integer("rounds", 1, 1, 1000000));
    d.waves_per_workgroup = static_cast<uint32_t>(kd.integer("waves_per_workgroup", 4, 1, 16));
    if (kd.has("kind")) {
      const std::string kind = kd.string("kind", "generic");
      const auto k = sim::gpu::kernel_kind_by_name(kind);
      if (!k) throw SpecError(kd.at("kind"), "expected generic, matrix or vector, got \"" + kind + "\"");
      d.kind = *k;
    }
    kd.done();
    p.kernels.push_back(std::move(d));
  }
  return p;
}

ArrivalDef read_arrival(Obj& a) {
  ArrivalDef d;
  const std::string kind = a.string("kind", "", true);
  if (kind == "poisson") d.kind = ArrivalKind::kPoisson;
  else if (kind == "periodic") d.kind = ArrivalKind::kPeriodic;
  else if (kind == "bursty") d.kind = ArrivalKind::kBursty;
  else if (kind == "uniform") d.kind = ArrivalKind::kUniform;
  else throw SpecError(a.at("kind"), "expected poisson, periodic, bursty or uniform, got \"" + kind + "\"");
  if (d.kind == ArrivalKind::kUniform) {
    d.min_interval_ms = a.number("min_interval_ms", -1, 0, 1e9);
    d.max_interval_ms = a.number("max_interval_ms", -1, 0, 1e9);
    if (d.min_interval_ms < 0) throw SpecError(a.at("min_interval_ms"), "required for kind uniform");
    if (d.max_interval_ms < 0) throw SpecError(a.at("max_interval_ms"), "required for kind uniform");
    if (d.max_interval_ms < d.min_interval_ms || d.max_interval_ms <= 0)
      throw SpecError(a.at("max_interval_ms"), "must be positive and at least min_interval_ms");
  } else {
    if (!a.has("rate_hz")) throw SpecError(a.at("rate_hz"), "required for kind " + kind);
    d.rate_hz = a.number("rate_hz", 0, 1e-6, 1e7);
  }
  d.burst_size = static_cast<uint32_t>(a.integer("burst_size", 4, 1, 100000));
  d.burst_gap_us = a.number("burst_gap_us", 0, 0, 1e9);
  a.done();
  return d;
}

LlmServerDef read_llm(Obj& l, const std::string& base_dir) {
  LlmServerDef d;
  d.steps = resolved(l.string("steps", "", true), base_dir);
  if (!l.has("lengths")) throw SpecError(l.at("lengths"), "required: [[prompt, output], ...]");
  const json& v = l.raw("lengths");
  if (!v.is_array() || v.empty()) throw SpecError(l.at("lengths"), "expected a non-empty array of [prompt, output]");
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = l.at("lengths") + "[" + std::to_string(i) + "]";
    if (!v[i].is_array() || v[i].size() != 2) throw SpecError(p, "expected [prompt tokens, output tokens]");
    const auto prompt = static_cast<uint32_t>(Obj::number_at(v[i][0], p + "[0]", 1, 1e7));
    const auto output = static_cast<uint32_t>(Obj::number_at(v[i][1], p + "[1]", 1, 1e7));
    d.lengths.emplace_back(prompt, output);
  }
  d.max_num_seqs = static_cast<uint32_t>(l.integer("max_num_seqs", 256, 1, 1u << 20));
  d.max_num_batched_tokens = static_cast<uint32_t>(l.integer("max_num_batched_tokens", 8192, 1, 1u << 24));
  if (!l.has("kv_blocks")) throw SpecError(l.at("kv_blocks"), "required");
  d.kv_blocks = l.integer("kv_blocks", 0, 1, 1ull << 40);
  d.step_gap_us = l.number("step_gap_us", 0, 0, 1e9);
  d.merge_vector_kernels = l.boolean("merge_vector_kernels", true);
  if (l.has("slo")) {
    Obj o(l.raw("slo"), l.at("slo"));
    d.ttft_slo_ms = o.number("ttft_ms", 500, 1e-3, 1e9);
    d.tpot_slo_ms = o.number("tpot_ms", 30, 1e-3, 1e9);
    o.done();
  }
  l.done();
  return d;
}

}  // namespace

Spec parse_spec(const json& doc, const std::string& base_dir) {
  Spec s;
  s.source = doc;
  Obj o(doc, "");
  s.profile = o.string("profile", "mi308x");
  {
    const auto names = sim::profile_names();
    if (std::find(names.begin(), names.end(), s.profile) == names.end())
      throw SpecError("profile", "unknown profile \"" + s.profile + "\" (valid: " + join(names) + ")");
  }
  s.gpus = static_cast<uint32_t>(o.integer("gpus", 1, 1, 8));
  try {
    (void)sim::make_profile(s.profile, s.gpus);
  } catch (const std::exception& e) {
    throw SpecError("gpus", e.what());
  }
  s.duration_s = o.number("duration_s", 10, 1e-6, 1e7);
  s.seed = o.integer("seed", 1, 0, UINT64_MAX);
  {
    const std::string b = o.string("baseline", "none");
    const auto known = baseline_names();
    s.baseline = b;
    if (std::find(known.begin(), known.end(), b) == known.end()) throw SpecError("baseline", "unknown baseline \"" + b + "\" (valid: " + join(baseline_names()) + ")");
  }
  std::set<std::string> names;
  auto unique_name = [&](const std::string& n, const std::string& path) {
    if (!names.insert(n).second) throw SpecError(path, "name \"" + n + "\" used twice");
  };
  if (o.has("online")) {
    const json& v = o.raw("online");
    if (!v.is_array()) throw SpecError("online", "expected an array of online clients");
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string path = "online[" + std::to_string(i) + "]";
      Obj c(v[i], path);
      OnlineDef d;
      d.name = c.string("name", "online" + std::to_string(i));
      unique_name(d.name, c.at("name"));
      d.gpus = read_gpus(c, s.gpus);
      if (!c.has("arrival")) throw SpecError(c.at("arrival"), "required");
      {
        Obj a(c.raw("arrival"), c.at("arrival"));
        d.arrival = read_arrival(a);
      }
      if (c.has("requests")) d.requests = c.integer("requests", 0, 1, 1ull << 40);
      if (c.has("llm")) {
        Obj l(c.raw("llm"), c.at("llm"));
        d.llm = read_llm(l, base_dir);
        if (c.has("kernels") || c.has("trace"))
          throw SpecError(c.at("llm"), "an LLM server's steps come from llm.steps: give no kernels or trace");
        if (!d.requests) d.requests = d.llm->lengths.size();
        if (*d.requests > d.llm->lengths.size())
          throw SpecError(c.at("requests"), "more requests than llm.lengths has lengths (" +
                                                std::to_string(d.llm->lengths.size()) + ")");
      } else {
        d.program = read_program(c, base_dir);
      }
      if (c.has("allreduce")) {
        Obj a(c.raw("allreduce"), c.at("allreduce"));
        if (d.llm && a.has("every"))
          throw SpecError(a.at("every"), "an LLM server's collectives are where its step grid puts them: give no every");
        if (!d.llm && a.has("bus_gbps"))
          throw SpecError(a.at("bus_gbps"), "only an LLM server's step grid gives collectives bytes to move");
        d.allreduce.every = static_cast<uint32_t>(a.integer("every", 1, 1, 1u << 20));
        d.allreduce.us = a.number("us", 0, 0, 1e7);
        d.allreduce.bus_gbps = a.number("bus_gbps", 0, 0, 1e6);
        a.done();
        if (d.gpus.size() < 2 && (d.allreduce.us > 0 || d.allreduce.bus_gbps > 0))
          throw SpecError(c.at("allreduce"), "an all-reduce needs a tensor-parallel client (\"gpus\" with two or more)");
      }
      if (d.llm && d.gpus.size() > 1 && d.allreduce.bus_gbps <= 0)
        throw SpecError(c.at("allreduce"), "a tensor-parallel LLM server needs allreduce.bus_gbps (its collectives' bytes "
                                           "move at that bandwidth)");
      c.done();
      s.online.push_back(std::move(d));
    }
  }
  if (o.has("offline")) {
    const json& v = o.raw("offline");
    if (!v.is_array()) throw SpecError("offline", "expected an array of offline jobs");
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string path = "offline[" + std::to_string(i) + "]";
      Obj c(v[i], path);
      OfflineDef d;
      d.name = c.string("name", "offline" + std::to_string(i));
      unique_name(d.name, c.at("name"));
      d.gpus = read_gpus(c, s.gpus);
      d.queues = static_cast<uint32_t>(c.integer("queues", 1, 1, 64));
      d.max_in_flight = static_cast<uint32_t>(c.integer("max_in_flight", 64, 1, 1u << 20));
      if (c.has("sync_each_iteration")) d.sync_each_iteration = c.boolean("sync_each_iteration", false);
      d.managed = c.boolean("managed", true);
      if (!d.managed && s.baseline.rfind("gpreempt-", 0) != 0)
        throw SpecError(c.at("managed"), "only the gpreempt baselines have a daemon to leave a job unmanaged (baseline is \"" +
                                             s.baseline + "\")");
      d.program = read_program(c, base_dir);
      if (!d.program.trace.empty() && c.has("queues"))
        throw SpecError(c.at("queues"), "a trace brings its own queues; queues applies to kernels only");
      c.done();
      s.offline.push_back(std::move(d));
    }
  }
  if (o.has("policy")) {
    Obj p(o.raw("policy"), "policy");
    if (p.has("grace_us")) s.policy.grace_us = p.number("grace_us", 0, 0, 1e7);
    if (p.has("idle_hysteresis_us")) s.policy.idle_hysteresis_us = p.number("idle_hysteresis_us", 0, 0, 1e9);
    if (p.has("poll_interval_us")) s.policy.poll_interval_us = p.number("poll_interval_us", 0, 1, 1e7);
    s.policy.early_hint_us = p.number("early_hint_us", 2000, 0, 1e9);
    if (p.has("min_share")) s.policy.min_share = p.number("min_share", 0, 0, 0.999);
    if (p.has("window_ms")) s.policy.window_ms = p.number("window_ms", 0, 0.001, 1e7);
    if (p.has("max_suspension_ms")) s.policy.max_suspension_ms = p.number("max_suspension_ms", 0, 0.001, 1e9);
    if (p.has("hold_after_idle_us")) s.policy.hold_after_idle_us = p.number("hold_after_idle_us", 0, 0, 1e9);
    if (p.has("resume_defer_max_us")) s.policy.resume_defer_max_us = p.number("resume_defer_max_us", 0, 0, 1e9);
    if (p.has("coalesce_flaps")) s.policy.coalesce_flaps = p.boolean("coalesce_flaps", true);
    if (p.has("slo")) {
      Obj o(p.raw("slo"), p.at("slo"));
      // The keys of gpreemptd's `slo` table: at most one percentile per measure.
      const char* expected = "expected pNN_ms, ttft_pNN_ms or tpot_pNN_ms (NN one of 50, 90, 95, 99, "
                             "999) and window_s";
      if (!p.raw("slo").is_object()) throw SpecError(p.at("slo"), expected);
      for (const auto& [key, value] : p.raw("slo").items()) {
        if (key == "window_s") continue;
        const auto goal = sched::goal_of_key(key);
        if (!goal) throw SpecError(o.at(key), std::string("unknown key: ") + expected);
        const double ms = o.number(key, 0, 1e-6, 1e7);
        const auto target = std::chrono::nanoseconds(std::llround(ms * 1e6));
        const auto once = [&](bool set) {
          if (set) throw SpecError(o.at(key), "an slo names one percentile per measure");
        };
        switch (goal->first) {
          case sched::Metric::kLatency:
            once(s.policy.slo_percentile.has_value());
            s.policy.slo_percentile = goal->second;
            s.policy.slo_target_ms = ms;
            break;
          case sched::Metric::kTtft:
            once(s.policy.slo_ttft.has_value());
            s.policy.slo_ttft = sched::Goal{goal->first, goal->second, target};
            break;
          case sched::Metric::kTpot:
            once(s.policy.slo_tpot.has_value());
            s.policy.slo_tpot = sched::Goal{goal->first, goal->second, target};
            break;
        }
      }
      if (!s.policy.has_slo()) throw SpecError(p.at("slo"), expected);
      s.policy.slo_window_s = o.number("window_s", 10, 1, 3600);
      o.done();
    }
    p.done();
  }
  if (o.has("model")) {
    Obj m(o.raw("model"), "model");
    if (m.has("cost_band")) {
      const std::string band = m.string("cost_band", "central");
      const auto b = sim::gpu::cost_band_by_name(band);
      if (!b) throw SpecError(m.at("cost_band"), "expected low, central or high, got \"" + band + "\"");
      s.model.cost_band = *b;
    }
    s.model.cwsr_save_scale = m.number("cwsr_save_scale", 1, 0, 1e6);
    s.model.hws_roundtrip_scale = m.number("hws_roundtrip_scale", 1, 0, 1e6);
    s.model.faults = m.string("faults", "");
    std::string err;
    if (!s.model.faults.empty() && !sim::gpu::parse_fault_plan(s.model.faults, &err))
      throw SpecError(m.at("faults"), err);
    // The oracle's switch is a free, instant runlist update (policies/oracle.cpp): an injected
    // HWS failure would turn the bound into a measure of the fault.
    if (!s.model.faults.empty() && s.baseline == "oracle")
      throw SpecError(m.at("faults"),
                      "the oracle's switches cost nothing and cannot fail; inject faults into "
                      "the other baselines' runs");
    s.model.wg_jitter = m.number("wg_jitter", 0, 0, 10);
    s.model.actuator_overhead_us = m.number("actuator_overhead_us", 0, 0, 1e7);
    if (m.has("params")) {
      const json& v = m.raw("params");
      if (!v.is_object()) throw SpecError(m.at("params"), "expected an object of profile field: number");
      sim::gpu::GpuProfile probe = *sim::gpu::profile_by_name(s.profile);
      for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string path = m.at("params") + "." + it.key();
        if (!it->is_number()) throw SpecError(path, "expected a number");
        std::string text = it->dump();
        std::string err;
        if (!sim::gpu::set_profile_param(probe, it.key(), text, &err)) throw SpecError(path, err);
        s.model.params.emplace_back(it.key(), text);
      }
    }
    m.done();
  }
  if (o.has("throttle")) {
    Obj t(o.raw("throttle"), "throttle");
    s.throttle_max_in_flight = static_cast<uint32_t>(t.integer("max_in_flight", 2, 1, 1u << 20));
    t.done();
  }
  if (o.has("partition")) {
    Obj t(o.raw("partition"), "partition");
    s.partition_online_cu_fraction = t.number("online_cu_fraction", 0.25, 0.001, 0.999);
    t.done();
  }
  if (o.has("record")) {
    Obj r(o.raw("record"), "record");
    s.record.latencies = r.boolean("latencies", true);
    s.record.timeline = r.boolean("timeline", false);
    s.record.decisions = r.boolean("decisions", true);
    s.record.timeline_from_s = r.number("timeline_from_s", 0, 0, kInf);
    s.record.timeline_to_s = r.number("timeline_to_s", kInf, 0, kInf);
    r.done();
  }
  s.solo = o.boolean("solo", false);
  o.done();
  if (s.online.empty() && s.offline.empty())
    throw SpecError("online", "the spec has neither online clients nor offline jobs");
  return s;
}

}  // namespace gpreempt::eval::des
