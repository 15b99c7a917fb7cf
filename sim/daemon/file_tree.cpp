#include "sim/daemon/file_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "common/error.h"

namespace gpreempt::sim::daemon {
namespace fs = std::filesystem;

namespace {
constexpr std::string_view kClassPrefix = "sys/class/kfd/kfd/";
constexpr std::string_view kDevicePrefix = "sys/devices/virtual/kfd/kfd/";

void write_atomically(const fs::path& path, const std::string& bytes) {
  fs::path tmp = path;
  tmp += ".kfdsim-tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
  if (fd < 0) throw gpreempt::Error(errno, "cannot create " + tmp.string() + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      throw gpreempt::Error(e, "cannot write " + tmp.string() + ": " + std::strerror(e));
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    throw gpreempt::Error(errno, "cannot rename " + tmp.string() + ": " + std::strerror(errno));
}
}  // namespace

std::string host_relative_path(const std::string& key) {
  if (key.compare(0, kClassPrefix.size(), kClassPrefix) == 0)
    return std::string(kDevicePrefix) + key.substr(kClassPrefix.size());
  if (key + "/" == kClassPrefix) return std::string(kDevicePrefix);
  return key;
}

FileTree::FileTree(std::string root) : root_(std::move(root)) {}

void FileTree::init() {
  fs::path r(root_);
  std::error_code ec;
  fs::create_directories(r / kDevicePrefix, ec);
  fs::create_directories(r / "sys/class/kfd", ec);
  fs::create_directories(r / "sys/kernel/debug/kfd", ec);
  fs::create_directories(r / "dev", ec);
  if (!fs::is_directory(r / kDevicePrefix))
    throw gpreempt::Error(ec.value(), "cannot create " + (r / kDevicePrefix).string() + ": " + ec.message());
  fs::path link = r / "sys/class/kfd/kfd";
  if (!fs::is_symlink(link)) {
    fs::remove_all(link, ec);
    fs::create_directory_symlink("../../devices/virtual/kfd/kfd", link, ec);
    if (ec) throw gpreempt::Error(ec.value(), "cannot create symlink " + link.string() + ": " + ec.message());
  }
  if (!fs::exists(r / "dev/kfd")) write_atomically(r / "dev/kfd", "");
  ::chmod((r / "dev/kfd").c_str(), 0666);
}

int FileTree::sync(const std::map<std::string, std::string>& rendered) {
  fs::path r(root_);
  std::map<std::string, std::string> files;
  std::set<std::string> dirs;
  auto add_parents = [&](const std::string& rel) {
    for (auto pos = rel.find('/'); pos != std::string::npos; pos = rel.find('/', pos + 1))
      dirs.insert(rel.substr(0, pos));
  };
  for (const auto& [key, bytes] : rendered) {
    std::string rel = host_relative_path(key);
    if (!rel.empty() && rel.back() == '/') {
      rel.pop_back();
      dirs.insert(rel);
      add_parents(rel);
    } else {
      files[rel] = bytes;
      add_parents(rel);
    }
  }
  int changes = 0;
  // Removals first (a directory may become a file or the other way round).
  for (const auto& [rel, _] : files_) {
    if (!files.count(rel)) {
      ::unlink((r / rel).c_str());
      ++changes;
    }
  }
  for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) {  // deepest first
    if (!dirs.count(*it)) {
      std::error_code ec;
      fs::remove_all(r / *it, ec);
      ++changes;
    }
  }
  for (const auto& d : dirs) {
    if (!dirs_.count(d)) {
      std::error_code ec;
      fs::path p = r / d;
      if (!fs::is_directory(p)) fs::create_directories(p, ec);
      if (!fs::is_directory(p)) throw gpreempt::Error(ENOTDIR, "cannot create directory " + p.string());
    }
  }
  for (const auto& [rel, bytes] : files) {
    auto old = files_.find(rel);
    if (old != files_.end() && old->second == bytes) continue;
    write_atomically(r / rel, bytes);
    ++changes;
  }
  files_ = std::move(files);
  dirs_ = std::move(dirs);
  return changes;
}

}  // namespace gpreempt::sim::daemon
