#include "sim/daemon/file_parts.h"

#include "sim/daemon/file_tree.h"
#include "sim/protocol/machine_paths.h"

namespace gpreempt::sim::daemon {
namespace {

constexpr std::string_view kProc = "sys/devices/virtual/kfd/kfd/proc";
constexpr std::string_view kClassDevice = "sys/class/kfd/kfd";

// `rel` is `path` itself or a directory above it ("" is above everything).
bool covers(std::string_view rel, std::string_view path) {
  return rel.empty() || path == rel ||
         (path.size() > rel.size() && path.compare(0, rel.size(), rel) == 0 &&
          path[rel.size()] == '/');
}

}  // namespace

FilePartRef file_part(FilePart part, int pid) {
  switch (part) {
    case FilePart::kTopology:
      return {part, 0, "sys/devices/virtual/kfd/kfd/topology"};
    case FilePart::kProcesses:
      return {part, 0, std::string(kProc)};
    case FilePart::kProcess:
      return {part, pid, std::string(kProc) + "/" + std::to_string(pid)};
    case FilePart::kMqds:
      return {part, 0, "sys/kernel/debug/kfd/mqds"};
    case FilePart::kHqds:
      return {part, 0, "sys/kernel/debug/kfd/hqds"};
    case FilePart::kRls:
      return {part, 0, "sys/kernel/debug/kfd/rls"};
  }
  return {};
}

std::vector<FilePartRef> parts_for_lookup(std::string_view guest_path) {
  std::string rel = protocol::normalize_dir(guest_path);
  while (!rel.empty() && rel.front() == '/') rel.erase(0, 1);
  // /sys/class/kfd/kfd is a symlink to the device directory: a walk from above it reaches proc/.
  const bool above_class_link = !rel.empty() && covers(rel, kClassDevice);
  rel = host_relative_path(rel);
  if (!rel.empty() && rel.back() == '/') rel.pop_back();

  std::vector<FilePartRef> out;
  if (guest_path.empty() || above_class_link || covers(rel, kProc)) {
    out.push_back(file_part(FilePart::kProcesses));
  } else if (covers(kProc, rel)) {  // below proc/: only that process's directory
    std::string_view rest = std::string_view(rel).substr(kProc.size() + 1);
    rest = rest.substr(0, rest.find('/'));
    // Only a number the kernel could print names a process directory (no sign, no leading 0).
    const bool number = !rest.empty() && rest.size() <= 9 &&
                        rest.find_first_not_of("0123456789") == std::string_view::npos &&
                        (rest[0] != '0' || rest.size() == 1);
    if (number) out.push_back(file_part(FilePart::kProcess, std::stoi(std::string(rest))));
  }
  for (FilePart f : {FilePart::kMqds, FilePart::kHqds, FilePart::kRls}) {
    FilePartRef p = file_part(f);
    if (guest_path.empty() || covers(rel, p.subtree)) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace gpreempt::sim::daemon
