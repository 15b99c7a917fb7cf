#include "target_check.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace gpreempt::cli {

namespace {

std::string comm_of(const discovery::SystemRoots& roots, int pid) {
  std::ifstream in(roots.proc + "/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

std::string named(const discovery::SystemRoots& roots, int pid) {
  const std::string c = comm_of(roots, pid);
  return "pid " + std::to_string(pid) + (c.empty() ? "" : " (" + c + ")");
}

enum class Relation { kChild, kDescendant, kOther };

// Every process with /dev/kfd open or a KFD sysfs entry, `pid`'s children first, then its other
// descendants, then the rest; the ones with queues before the ones without, within each group.
Failure failure_with_candidates(int pid, const std::string& reason, const std::string& why,
                                const discovery::SystemRoots& roots) {
  struct Candidate {
    discovery::ProcessInfo info;
    Relation relation;
  };
  std::vector<Candidate> found;
  for (auto& p : discovery::gpu_processes(roots)) {
    if (p.pid == pid) continue;
    Relation r = Relation::kOther;
    if (discovery::parent_pid(roots, p.pid) == pid)
      r = Relation::kChild;
    else if (discovery::descends_from(roots, p.pid, pid))
      r = Relation::kDescendant;
    found.push_back({std::move(p), r});
  }
  std::stable_sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
    if (a.relation != b.relation) return a.relation < b.relation;
    return a.info.queues.size() > b.info.queues.size();
  });
  static const char* kRelation[] = {"child", "descendant", "other"};
  nlohmann::json cands = nlohmann::json::array();
  std::string text;
  constexpr std::size_t kShown = 8;
  for (std::size_t i = 0; i < found.size(); ++i) {
    const auto& c = found[i];
    const std::string comm = comm_of(roots, c.info.pid);
    cands.push_back({{"pid", c.info.pid},
                     {"command", comm},
                     {"queues", c.info.queues.size()},
                     {"relation", kRelation[static_cast<int>(c.relation)]}});
    if (i < kShown)
      text += "\n  " + std::to_string(c.info.pid) + (comm.empty() ? "" : " (" + comm + ")") + ": " +
              std::to_string(c.info.queues.size()) + " queue(s)" +
              (c.relation == Relation::kChild        ? ", child of " + std::to_string(pid)
               : c.relation == Relation::kDescendant ? ", descendant of " + std::to_string(pid)
                                                     : "");
  }
  if (found.size() > kShown) text += "\n  ... and " + std::to_string(found.size() - kShown) + " more (gpreempt ps)";
  std::string message = named(roots, pid) + " " + why;
  if (found.empty())
    message += "; no process has /dev/kfd open (gpreempt ps lists GPU processes)";
  else
    message += "; processes with /dev/kfd open:" + text;
  Failure f(message);
  f.detail = {{"pid", pid}, {"reason", reason}, {"candidates", cands}};
  return f;
}

}  // namespace

Failure no_queues_failure(int pid, const discovery::SystemRoots& roots) {
  return failure_with_candidates(
      pid, "no_queues",
      "has no GPU queues yet (its runtime creates them when it first uses the GPU)", roots);
}

void require_gpu_queues(int pid, const discovery::SystemRoots& roots) {
  std::error_code ec;
  if (!std::filesystem::exists(roots.proc + "/" + std::to_string(pid), ec))
    throw failure_with_candidates(pid, "no_such_process", "does not exist", roots);
  const auto info = discovery::describe_process(roots, pid);
  if (!info.has_kfd_sysfs)
    throw failure_with_candidates(pid, "no_kfd_process", "has not opened /dev/kfd (no KFD process)",
                                  roots);
  if (info.queues.empty()) throw no_queues_failure(pid, roots);
}

}  // namespace gpreempt::cli
