#include "eval/des/llm/step_grid.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "eval/des/spec.h"

namespace gpreempt::eval::des::llm {

namespace {

sim::gpu::MathType math_by_name(const std::string& s, const std::string& where) {
  if (auto t = sim::gpu::math_type_by_name(s)) return *t;
  throw SpecError(where, "unknown math type \"" + s + "\"");
}

std::array<uint32_t, 3> dims(const nlohmann::json& v) {
  std::array<uint32_t, 3> d{1, 1, 1};
  for (std::size_t i = 0; i < v.size() && i < 3; ++i) d[i] = std::max<uint32_t>(1, v[i].get<uint32_t>());
  return d;
}

std::vector<Op> read_ops(const nlohmann::json& v, const std::string& where) {
  std::vector<Op> out;
  for (const auto& k : v) {
    if (k.size() > 7 && k.at(7) == "collective") {
      // A shard's collective launches nothing: it belongs to the kernel whose result it exchanges.
      if (out.empty()) throw SpecError(where, "a collective (" + k.at(0).get<std::string>() + ") before any kernel");
      out.back().collective_bytes += k.at(4).get<double>();
      continue;
    }
    Op o;
    o.name = k.at(0).get<std::string>();
    o.grid = dims(k.at(1));
    o.workgroup = dims(k.at(2));
    o.flops = k.at(3).get<double>();
    o.bytes = k.at(4).get<double>();
    o.math = math_by_name(k.at(5).get<std::string>(), where);
    o.matrix = k.at(6).get<bool>();
    out.push_back(std::move(o));
  }
  return out;
}

// Where `v` falls on `axis`: the two grid indices around it and the weight of the upper one. Zero
// is only ever itself (a step with no prefill or no decode launches other kernels); a positive
// value below the first positive point takes that point; beyond the last, the last two extrapolate.
struct Bracket {
  std::size_t lo, hi;
  double t;
};
Bracket bracket(const std::vector<double>& axis, double v) {
  const auto first_pos = std::find_if(axis.begin(), axis.end(), [](double a) { return a > 0; });
  if (v <= 0 && axis.front() <= 0) return {0, 0, 0};
  const std::size_t f = static_cast<std::size_t>(first_pos - axis.begin());
  if (v <= axis[f]) return {f, f, 0};
  const std::size_t n = axis.size();
  if (v >= axis[n - 1]) {
    if (n - 1 == f) return {f, f, 0};
    return {n - 2, n - 1, (v - axis[n - 2]) / (axis[n - 1] - axis[n - 2])};
  }
  std::size_t i = f;
  while (axis[i + 1] < v) ++i;
  return {i, i + 1, (v - axis[i]) / (axis[i + 1] - axis[i])};
}

}  // namespace

StepShape step_shape(const Batch& b, uint32_t block_size, uint32_t decode_groups) {
  StepShape s;
  std::vector<uint32_t> ctx;
  for (const auto& w : b.work) {
    if (w.n_new == 1) ctx.push_back(w.ctx);
    else s.prefill_tokens += w.n_new;
  }
  s.decode_seqs = static_cast<uint32_t>(ctx.size());
  if (ctx.empty()) return s;
  std::sort(ctx.begin(), ctx.end());
  const std::size_t groups = std::min<std::size_t>(std::max<uint32_t>(decode_groups, 1), ctx.size());
  const std::size_t per = (ctx.size() + groups - 1) / groups;
  double padded = 0;
  for (std::size_t k = 0; k < ctx.size(); k += per) {
    const std::size_t end = std::min(ctx.size(), k + per);
    const uint64_t longest = ctx[end - 1] + 1;
    padded += static_cast<double>((longest + block_size - 1) / block_size * block_size) * static_cast<double>(end - k);
  }
  s.decode_len = padded / static_cast<double>(ctx.size());
  return s;
}

std::shared_ptr<const StepGrid> StepGrid::load(const std::string& file, const std::string& spec_path) {
  std::ifstream in(file);
  if (!in) throw SpecError(spec_path, "cannot read step grid " + file);
  auto g = std::make_shared<StepGrid>();
  const std::string where = spec_path + " (" + file + ")";
  try {
    const auto doc = nlohmann::json::parse(in);
    if (doc.value("schema", "") != "gpreempt-llm-step-grid")
      throw SpecError(where, "not a step grid (python3 -m gpreempt.sim.llm.step_grid writes one)");
    g->model_ = doc.value("model", "");
    g->block_size_ = doc.at("block_size").get<uint32_t>();
    g->decode_groups_ = doc.at("decode_groups").get<uint32_t>();
    g->tp_ = doc.value("tp", 1u);
    if (g->tp_ < 1) throw SpecError(where, "tp must be at least 1");
    for (const auto& s : doc.at("layers")) g->segments_.emplace_back(s.at(0).get<int>(), s.at(1).get<uint32_t>());
    const char* names[3] = {"prefill_tokens", "decode_seqs", "decode_len"};
    for (int a = 0; a < 3; ++a) {
      for (const auto& v : doc.at("axes").at(names[a])) g->axes_[a].push_back(v.get<double>());
      if (g->axes_[a].empty() || !std::is_sorted(g->axes_[a].begin(), g->axes_[a].end()))
        throw SpecError(where, std::string("axis ") + names[a] + " must be non-empty and increasing");
    }
    for (const auto& p : doc.at("points")) {
      std::array<std::size_t, 3> idx{};
      for (int a = 0; a < 3; ++a) {
        const double v = p.at(names[a]).get<double>();
        auto it = std::find(g->axes_[a].begin(), g->axes_[a].end(), v);
        if (it == g->axes_[a].end()) throw SpecError(where, std::string("a point off the axis ") + names[a]);
        idx[a] = static_cast<std::size_t>(it - g->axes_[a].begin());
      }
      Point pt;
      pt.head = read_ops(p.at("head"), where);
      pt.tail = read_ops(p.at("tail"), where);
      for (auto it = p.at("layers").begin(); it != p.at("layers").end(); ++it)
        pt.layers[std::stoi(it.key())] = read_ops(it.value(), where);
      for (const auto& [kind, n] : g->segments_)
        if (!pt.layers.count(kind)) throw SpecError(where, "a point lacks layer kind " + std::to_string(kind));
      g->points_[idx] = std::move(pt);
    }
  } catch (const SpecError&) {
    throw;
  } catch (const std::exception& e) {
    throw SpecError(where, std::string("malformed step grid: ") + e.what());
  }
  if (g->points_.empty()) throw SpecError(where, "the step grid has no points");
  return g;
}

const StepGrid::Point* StepGrid::at(std::size_t p, std::size_t d, std::size_t c) const {
  auto it = points_.find({p, d, c});
  return it == points_.end() ? nullptr : &it->second;
}

std::vector<Op> StepGrid::Point::expanded(const std::vector<std::pair<int, uint32_t>>& segments) const {
  std::vector<Op> out = head;
  for (const auto& [kind, n] : segments) {
    const auto& l = layers.at(kind);
    for (uint32_t i = 0; i < n; ++i) out.insert(out.end(), l.begin(), l.end());
  }
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

std::vector<Op> StepGrid::ops(const StepShape& s) const {
  const Bracket b[3] = {bracket(axes_[0], s.prefill_tokens), bracket(axes_[1], s.decode_seqs),
                        bracket(axes_[2], s.decode_len)};
  struct Corner {
    const Point* pt;
    double w;
  };
  std::vector<Corner> corners;
  bool complete = true;
  for (int m = 0; m < 8; ++m) {
    double w = 1;
    std::size_t idx[3];
    for (int a = 0; a < 3; ++a) {
      const bool up = (m >> a) & 1;
      w *= up ? b[a].t : 1 - b[a].t;
      idx[a] = up ? b[a].hi : b[a].lo;
    }
    if (w == 0) continue;
    const Point* pt = at(idx[0], idx[1], idx[2]);
    if (!pt) complete = false;
    else corners.push_back({pt, w});
  }
  const auto same_kernels = [](const Point& x, const Point& y) {
    const auto names = [](const std::vector<Op>& v) {
      std::vector<std::string> n;
      for (const auto& o : v) n.push_back(o.name);
      return n;
    };
    if (names(x.head) != names(y.head) || names(x.tail) != names(y.tail)) return false;
    for (const auto& [k, l] : x.layers)
      if (!y.layers.count(k) || names(l) != names(y.layers.at(k))) return false;
    return true;
  };
  for (const auto& c : corners) complete = complete && same_kernels(*c.pt, *corners.front().pt);
  if (!complete || corners.empty()) {
    const Point* up = at(b[0].hi, b[1].hi, b[2].hi);
    if (!up) up = &points_.rbegin()->second;  // the grid's largest step: never under-charges
    return up->expanded(segments_);
  }
  // The dominant corner gives each kernel's grid; FLOPs and bytes are the weighted sums.
  const Corner* main = &*std::max_element(corners.begin(), corners.end(),
                                          [](const Corner& x, const Corner& y) { return x.w < y.w; });
  std::vector<Op> out = main->pt->expanded(segments_);
  std::vector<std::vector<Op>> each;
  for (const auto& c : corners) each.push_back(c.pt->expanded(segments_));
  for (std::size_t i = 0; i < out.size(); ++i) {
    double f = 0, by = 0, cb = 0;
    for (std::size_t j = 0; j < corners.size(); ++j) {
      f += corners[j].w * each[j][i].flops;
      by += corners[j].w * each[j][i].bytes;
      cb += corners[j].w * each[j][i].collective_bytes;
    }
    out[i].flops = std::max(0.0, f);
    out[i].bytes = std::max(0.0, by);
    // A collective stays where the dominant corner has one (the corners launch the same kernels).
    out[i].collective_bytes = out[i].collective_bytes > 0 ? std::max(0.0, cb) : 0.0;
  }
  return out;
}

sim::gpu::SimTime CollectiveCost::ns(double bus_bytes) const {
  const double us = latency_us + (bus_gbps > 0 ? bus_bytes / (bus_gbps * 1e3) : 0.0);
  return static_cast<sim::gpu::SimTime>(std::llround(us * 1e3));
}

Program StepGrid::program(const StepShape& s, const sim::gpu::GpuProfile& p, bool merge_vector_runs,
                          const CollectiveCost& coll) const {
  Program prog;
  // A run of consecutive vector kernels: its summed time and its largest grid.
  struct Run {
    std::string name;
    sim::gpu::KernelShape shape;
    sim::gpu::SimTime busy = 0;
    uint32_t kernels = 0;
  } run;
  const auto emit = [&](const std::string& name, const sim::gpu::KernelShape& shape, sim::gpu::SimTime busy) {
    Step st;
    st.kernel.name = name;
    st.kernel.grid = shape.grid;
    st.kernel.workgroup = shape.workgroup;
    st.kernel.resources = shape.resources;
    st.kernel.wg_cost_ns = sim::gpu::wg_cost_for(p, shape, busy);
    prog.nominal_ns += busy + p.packet_overhead_ns;
    prog.steps.push_back(std::move(st));
  };
  const auto flush = [&] {
    if (run.kernels == 0) return;
    emit(run.kernels == 1 ? run.name : run.name + "+" + std::to_string(run.kernels - 1), run.shape, run.busy);
    run = Run{};
  };
  // The shards exchange results after the kernel just emitted: it gets the collective's time.
  const auto collective = [&](const Op& o) {
    if (o.collective_bytes <= 0) return;
    const sim::gpu::SimTime t = coll.ns(o.collective_bytes);
    prog.steps.back().collective_ns = std::max<sim::gpu::SimTime>(1, t);
    prog.nominal_ns += t;
  };
  for (const Op& o : ops(s)) {
    // torch_mode's register model: a GEMM tile for matrix-core operators, elementwise otherwise.
    const sim::gpu::KernelShape shape{
        o.grid, o.workgroup,
        sim::gpu::resources_for(o.matrix ? sim::gpu::KernelKind::kMatrix : sim::gpu::KernelKind::kVector)};
    const sim::gpu::SimTime busy = sim::gpu::roofline_ns(p, shape, o.flops, o.bytes, o.math, o.matrix);
    if (o.matrix || !merge_vector_runs) {
      flush();
      emit(o.name, shape, busy);
      collective(o);
      continue;
    }
    // Consecutive vector kernels (a norm's, rotary's, softmax's elementwise steps) become one, as
    // vLLM's fused kernels are: the time of each and the packet overheads it no longer pays stay
    // in the step, so a step lasts what the unmerged kernels would; the DES simulates a third of
    // the kernels. Preemption sees the same GEMMs and attention matmuls.
    if (run.kernels == 0) {
      run.name = o.name;
      run.shape = shape;
      run.busy = busy;
    } else {
      run.busy += p.packet_overhead_ns + busy;
      if (shape.workgroups() > run.shape.workgroups()) run.shape = shape;
    }
    ++run.kernels;
    if (o.collective_bytes > 0) {
      flush();  // a run ends at a collective: what follows waits for it
      collective(o);
    }
  }
  flush();
  gate_collectives(prog);
  return prog;
}

}  // namespace gpreempt::eval::des::llm
