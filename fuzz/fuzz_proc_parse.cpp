// libFuzzer target: the /proc and per-process sysfs parsers of lib/discovery (NSpid of
// /proc/<pid>/status, the ppid of /proc/<pid>/stat, /proc/<pid>/cmdline, the container id of
// /proc/<pid>/cgroup, the type/gpuid/size files of a KFD sysfs queue) on arbitrary bytes.
#include <climits>

#include "discovery/proc_parse.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpreempt;
  const std::string_view text = fuzz::as_text(data, size);
  for (int pid : discovery::parse_nspid(text))
    if (pid < 0) fuzz::violated("negative pid from NSpid");
  if (auto ppid = discovery::parse_stat_ppid(text); ppid && *ppid < 0) fuzz::violated("negative ppid");
  std::size_t bytes = 0;
  for (const auto& a : discovery::parse_cmdline(text)) bytes += a.size() + 1;
  if (bytes > size + 1) fuzz::violated("cmdline arguments longer than the input");
  if (auto id = discovery::container_id_from_cgroup(text); id && id->size() < 32) fuzz::violated("short container id");
  // The three sysfs queue files: the input cut in three at its first two NUL bytes.
  const std::size_t a = text.find('\0');
  const std::size_t b = a == std::string_view::npos ? a : text.find('\0', a + 1);
  const std::string_view type = text.substr(0, a);
  const std::string_view gpuid = a == std::string_view::npos ? std::string_view() : text.substr(a + 1, b - a - 1);
  const std::string_view qsize = b == std::string_view::npos ? std::string_view() : text.substr(b + 1);
  if (auto q = discovery::parse_sysfs_queue(type, gpuid, qsize)) (void)discovery::sysfs_queue_type_name(q->type);
  return 0;
}
