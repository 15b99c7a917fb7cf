#include "kfd/proc_queues.h"

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "common/error.h"
#include "common/text_file.h"

namespace gpreempt::kfd {

std::optional<uint64_t> parse_sysfs_number(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string sysfs_queue_type_name(uint32_t type) {
  switch (type) {
    case 0: return "compute";
    case 1: return "sdma";
    case 2: return "hiq";
    case 3: return "sdma_xgmi";
    default: return "type " + std::to_string(type);
  }
}

std::vector<SysfsQueue> read_process_queues(int pid, const std::string& root) {
  const std::string dir = root + "/" + std::to_string(pid);
  auto names = list_directory(dir + "/queues");
  if (!names) {
    int e = errno;
    if (e == ENOENT)
      throw Error(ESRCH, "process " + std::to_string(pid) + " has no KFD queues directory (" +
                             dir + "/queues): it has not opened /dev/kfd, or it has exited");
    throw Error(e, "cannot list " + dir + "/queues: " + errno_text(e));
  }
  std::vector<SysfsQueue> out;
  for (const auto& name : *names) {
    auto id = parse_sysfs_number(name);
    if (!id) continue;
    const std::string qdir = dir + "/queues/" + name;
    auto value = [&](const char* file) -> std::optional<uint64_t> {
      auto text = read_text_file(qdir + "/" + file);
      if (!text) return std::nullopt;  // the queue was destroyed while we read it
      auto v = parse_sysfs_number(*text);
      if (!v)
        throw Error(EIO, qdir + "/" + file + ": expected an unsigned decimal number, got \"" +
                             *text + "\"");
      return v;
    };
    auto size = value("size");
    auto type = value("type");
    auto gpu = value("gpuid");
    if (!size || !type || !gpu) continue;
    out.push_back({static_cast<uint32_t>(*id), static_cast<uint32_t>(*gpu),
                   static_cast<uint32_t>(*type), *size});
  }
  std::sort(out.begin(), out.end(),
            [](const SysfsQueue& a, const SysfsQueue& b) { return a.queue_id < b.queue_id; });
  return out;
}

}  // namespace gpreempt::kfd
