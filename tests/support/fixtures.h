// Where tests find the real captures of ../shared and the programs of the build.
//
// Tests that read ../shared must skip (never pass) when it is absent, so a user's own clone, which
// has no ../shared, still passes its suite: use GPREEMPT_REQUIRE_SHARED().
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace gpreempt::testing {

// The environment variable if set, else the value CMake compiled in (gpreempt_add_gtest).
inline std::filesystem::path env_path(const char* var, const char* compiled) {
  const char* v = std::getenv(var);
  return v ? std::filesystem::path(v) : std::filesystem::path(compiled);
}

#ifndef GPREEMPT_TEST_SHARED_DIR
#define GPREEMPT_TEST_SHARED_DIR ""
#define GPREEMPT_TEST_SOURCE_DIR ""
#define GPREEMPT_TEST_BINARY_DIR ""
#endif

// ../shared beside the checkout, as CMake saw it; empty when it does not exist.
inline std::filesystem::path shared_dir() {
  auto p = env_path("GPREEMPT_SHARED_DIR", GPREEMPT_TEST_SHARED_DIR);
  if (p.empty() || !std::filesystem::is_directory(p / "kfd")) return {};
  return p;
}

// A fixture under shared_dir() as a command-line argument (`rel`: "realdata/debugfs/...").
inline std::string shared_file(const char* rel) { return (shared_dir() / rel).string(); }

inline std::filesystem::path binary_dir() {
  return env_path("GPREEMPT_BINARY_DIR", GPREEMPT_TEST_BINARY_DIR);
}
inline std::filesystem::path source_dir() {
  return env_path("GPREEMPT_SOURCE_DIR", GPREEMPT_TEST_SOURCE_DIR);
}

// The process has exited: it is gone, or a zombie nobody has reaped yet (its parent died before
// it; init reaps it in its own time).
inline bool process_ended(int pid) {
  std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  if (!std::getline(st, s)) return true;
  const auto paren = s.rfind(')');
  return paren != std::string::npos && paren + 2 < s.size() && s[paren + 2] == 'Z';
}

// A /proc/PID/stat under `proc_root` as the process readers parse it: the pid, a name, and the
// start time (field 22) that tells a process from a later one with its pid.
inline void write_proc_stat(const std::filesystem::path& proc_root, int pid, uint64_t start_ticks) {
  std::filesystem::create_directories(proc_root / std::to_string(pid));
  std::ofstream(proc_root / std::to_string(pid) / "stat")
      << pid << " (worker) S 1 " << pid << " " << pid
      << " 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 " << start_ticks
      << " 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n";
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace gpreempt::testing

#define GPREEMPT_REQUIRE_SHARED()                                                  \
  do {                                                                             \
    if (::gpreempt::testing::shared_dir().empty())                                 \
      GTEST_SKIP() << "../shared (real captures, KFD facts) is not beside this checkout"; \
  } while (0)
