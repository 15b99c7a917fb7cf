#include "sim/daemon/file_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "common/error.h"
#include "sim/protocol/machine_paths.h"

namespace gpreempt::sim::daemon {
namespace fs = std::filesystem;

namespace {
const std::string& key_of(const std::string& k) { return k; }
template <typename V>
const std::string& key_of(const std::pair<const std::string, V>& e) {
  return e.first;
}

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
// Marks a symbolic link among the files (no rendered file starts with a NUL byte).
constexpr std::string_view kLinkMark{"\0symlink:", 9};
}  // namespace

std::string host_relative_path(const std::string& key) {
  if (key.compare(0, kClassPrefix.size(), kClassPrefix) == 0)
    return std::string(kDevicePrefix) + key.substr(kClassPrefix.size());
  if (key + "/" == kClassPrefix) return std::string(kDevicePrefix);
  return key;
}

FileTree::FileTree(std::string root) : root_(std::move(root)) {}

std::string FileTree::render_node_path(uint32_t minor) const {
  return protocol::render_node_placeholder(root_, minor);
}

void FileTree::init(const std::vector<uint32_t>& render_minors) {
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
  if (!render_minors.empty()) fs::create_directories(r / "dev/dri", ec);
  for (uint32_t minor : render_minors) {
    // Never rewritten: open files of it must keep naming the node.
    const fs::path node = render_node_path(minor);
    if (!fs::exists(node)) write_atomically(node, "");
    ::chmod(node.c_str(), 0666);
  }
}

int FileTree::sync(const std::map<std::string, std::string>& rendered) { return sync_under("", rendered); }

namespace {
// `rel` is `under` itself or lies below it ("" is above everything).
bool in_subtree(const std::string& rel, const std::string& under) {
  return under.empty() || (rel.compare(0, under.size(), under) == 0 &&
                           (rel.size() == under.size() || rel[under.size()] == '/'));
}

// The keys of a sorted container that lie in the subtree `under`: `under` itself, then the
// contiguous range of keys starting with "under/" (keys like "under-x" sort between the two).
template <typename C>
std::vector<std::string> keys_in_subtree(const C& c, const std::string& under) {
  std::vector<std::string> out;
  if (under.empty()) {
    for (const auto& e : c) out.push_back(key_of(e));
    return out;
  }
  if (auto it = c.find(under); it != c.end()) out.push_back(under);
  const std::string prefix = under + "/";
  for (auto it = c.lower_bound(prefix); it != c.end() && key_of(*it).compare(0, prefix.size(), prefix) == 0; ++it)
    out.push_back(key_of(*it));
  return out;
}
}  // namespace

int FileTree::sync_under(const std::string& under, const std::map<std::string, std::string>& rendered) {
  fs::path r(root_);
  std::map<std::string, std::string> files;
  std::set<std::string> dirs;   // in the subtree
  std::set<std::string> above;  // ancestors of the subtree: created when missing, never removed
  auto add_parents = [&](const std::string& rel) {
    for (auto pos = rel.find('/'); pos != std::string::npos; pos = rel.find('/', pos + 1)) {
      std::string d = rel.substr(0, pos);
      (in_subtree(d, under) ? dirs : above).insert(std::move(d));
    }
  };
  for (const auto& [key, bytes] : rendered) {
    std::string rel = host_relative_path(key);
    const bool is_dir = !rel.empty() && rel.back() == '/';
    if (is_dir) rel.pop_back();
    // "name@" → a symbolic link `name` to `bytes`: kept among the files, its bytes marked.
    if (!is_dir && !rel.empty() && rel.back() == '@') {
      rel.pop_back();
      if (!in_subtree(rel, under))
        throw std::invalid_argument("file tree: " + key + " is not under " + (under.empty() ? "/" : under));
      add_parents(rel);
      files[rel] = std::string(kLinkMark) + bytes;
      continue;
    }
    if (!in_subtree(rel, under))
      throw std::invalid_argument("file tree: " + key + " is not under " + (under.empty() ? "/" : under));
    add_parents(rel);
    if (is_dir)
      dirs.insert(rel);
    else
      files[rel] = bytes;
  }
  int changes = 0;
  // Removals first (a directory may become a file or the other way round).
  for (const auto& rel : keys_in_subtree(files_, under)) {
    if (!files.count(rel)) {
      ::unlink((r / rel).c_str());
      files_.erase(rel);
      ++changes;
    }
  }
  const auto old_dirs = keys_in_subtree(dirs_, under);
  for (auto it = old_dirs.rbegin(); it != old_dirs.rend(); ++it) {  // deepest first
    if (!dirs.count(*it)) {
      std::error_code ec;
      fs::remove_all(r / *it, ec);
      dirs_.erase(*it);
      ++changes;
    }
  }
  for (const auto* set : {&above, &dirs}) {  // std::set order: parents before children
    for (const auto& d : *set) {
      if (dirs_.count(d)) continue;
      std::error_code ec;
      fs::path p = r / d;
      if (!fs::is_directory(p)) fs::create_directories(p, ec);
      if (!fs::is_directory(p)) throw gpreempt::Error(ENOTDIR, "cannot create directory " + p.string());
      dirs_.insert(d);
    }
  }
  for (auto& [rel, bytes] : files) {
    auto old = files_.find(rel);
    if (old != files_.end() && old->second == bytes) continue;
    if (bytes.compare(0, kLinkMark.size(), kLinkMark) == 0) {
      ::unlink((r / rel).c_str());
      std::error_code ec;
      fs::create_symlink(bytes.substr(kLinkMark.size()), r / rel, ec);
      if (ec) throw gpreempt::Error(ec.value(), "cannot create symlink " + (r / rel).string() + ": " + ec.message());
    } else {
      write_atomically(r / rel, bytes);
    }
    files_[rel] = std::move(bytes);
    ++changes;
  }
  return changes;
}

}  // namespace gpreempt::sim::daemon
