#include "eval/des/kernel_trace.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "sim/gpu/roofline.h"

namespace gpreempt::eval::des {

using sim::gpu::SimTime;

namespace {

struct Record {
  int line = 0;
  int64_t pid = 0;
  int64_t queue_id = 0;
  std::string name;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> workgroup{1, 1, 1};
  sim::gpu::KernelKind kind = sim::gpu::KernelKind::kGeneric;
  double submit_us = 0, start_us = 0, end_us = 0;
};

std::array<uint32_t, 3> dims(const nlohmann::json& v, const std::string& where) {
  std::array<uint32_t, 3> d{1, 1, 1};
  if (v.is_number_unsigned()) {
    d[0] = v.get<uint32_t>();
    return d;
  }
  if (!v.is_array() || v.empty() || v.size() > 3) throw SpecError(where, "expected 1 to 3 sizes");
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_unsigned()) throw SpecError(where, "expected unsigned integers");
    d[i] = std::max<uint32_t>(v[i].get<uint32_t>(), 1);
  }
  return d;
}

}  // namespace

Program load_kernel_trace(const std::string& file, const sim::gpu::GpuProfile& p,
                          const std::string& spec_path) {
  std::ifstream in(file);
  if (!in) throw SpecError(spec_path, "cannot read kernel trace " + file);
  std::vector<Record> recs;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = spec_path + " (" + file + ":" + std::to_string(n) + ")";
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const std::exception& e) {
      // getline stopped at the end of the file rather than at a newline: a writer killed inside
      // the write of its last line (torch_mode's traces can end so after a SIGKILL).
      if (in.eof())
        throw SpecError(where, "the last line is cut (no newline: its writer died while writing it); "
                               "remove that line to replay the rest");
      throw SpecError(where, std::string("not JSON: ") + e.what());
    }
    Record r;
    r.line = n;
    try {
      r.pid = j.value("pid", int64_t{0});
      r.queue_id = j.at("queue_id").get<int64_t>();
      r.name = j.value("name", std::string("kernel"));
      r.grid = dims(j.at("grid"), where + " grid");
      r.workgroup = dims(j.at("workgroup"), where + " workgroup");
      // The register model torch_mode priced it with (older traces: generic).
      if (j.contains("kind")) {
        const auto kind = sim::gpu::kernel_kind_by_name(j.at("kind").get<std::string>());
        if (!kind) throw SpecError(where + " kind", "expected generic, matrix or vector");
        r.kind = *kind;
      }
      r.submit_us = j.at("submit_us").get<double>();
      r.start_us = j.at("start_us").get<double>();
      r.end_us = j.at("end_us").get<double>();
    } catch (const SpecError&) {
      throw;
    } catch (const std::exception& e) {
      throw SpecError(where, std::string("expected queue_id, grid, workgroup, submit_us, start_us, end_us: ") + e.what());
    }
    if (!(r.end_us >= r.start_us)) throw SpecError(where, "end_us before start_us");
    recs.push_back(std::move(r));
  }
  if (recs.empty()) throw SpecError(spec_path, "kernel trace " + file + " has no records");
  // Records are written as dispatches finish; the replay needs submission order.
  std::stable_sort(recs.begin(), recs.end(), [](const Record& a, const Record& b) {
    return a.submit_us != b.submit_us ? a.submit_us < b.submit_us : a.start_us < b.start_us;
  });
  Program prog;
  std::map<std::pair<int64_t, int64_t>, uint32_t> queue_index;
  double latest_end = -1;  // the latest end among the kernels submitted before
  std::size_t latest = 0;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    const Record& r = recs[i];
    auto [it, added] = queue_index.try_emplace({r.pid, r.queue_id}, static_cast<uint32_t>(queue_index.size()));
    Step s;
    s.queue = it->second;
    s.kernel.name = r.name;
    s.kernel.grid = r.grid;
    s.kernel.workgroup = r.workgroup;
    s.kernel.resources = sim::gpu::resources_for(r.kind);
    sim::gpu::KernelShape shape{r.grid, r.workgroup, s.kernel.resources};
    const SimTime busy = std::max<SimTime>(
        1, static_cast<SimTime>(std::llround((r.end_us - r.start_us) * 1e3)) - p.packet_overhead_ns);
    s.kernel.wg_cost_ns = sim::gpu::wg_cost_for(p, shape, busy);
    // The host waited for the latest kernel that had finished when this one was submitted, if
    // every earlier kernel was done by then (otherwise the launch was asynchronous).
    const bool all_done = i > 0 && latest_end <= r.submit_us;
    if (all_done) {
      s.after.push_back(static_cast<uint32_t>(latest));
      s.host_delay_ns = static_cast<SimTime>(std::llround((r.submit_us - latest_end) * 1e3));
    }
    prog.steps.push_back(std::move(s));
    if (r.end_us > latest_end) {
      latest_end = r.end_us;
      latest = i;
    }
  }
  prog.queues = static_cast<uint32_t>(queue_index.size());
  double first = recs.front().submit_us, last = 0;
  for (const auto& r : recs) last = std::max(last, r.end_us);
  prog.nominal_ns = static_cast<SimTime>((last - first) * 1e3);
  return prog;
}

}  // namespace gpreempt::eval::des
