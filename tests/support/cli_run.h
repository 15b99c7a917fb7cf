// Runs the built `gpreempt` (or any shell command line); captures stdout, stderr and the exit code.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "fixtures.h"

namespace gpreempt::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// The test programs and `gpreempt` are both in <build>/bin, so the CLI is found beside this
// executable (independent of how the environment was passed down).
inline std::string gpreempt_exe() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) return (self.parent_path() / "gpreempt").string();
  return (binary_dir() / "bin/gpreempt").string();
}

// Runs a shell command line; stdout and stderr are captured apart.
inline CliResult run_shell(const std::string& command) {
  const std::string err_path = "/tmp/gpreempt_cli_test_" + std::to_string(::getpid()) + ".err";
  CliResult r;
  std::FILE* p = ::popen(("(" + command + ") 2>" + err_path).c_str(), "r");
  if (!p) return r;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  try {
    r.err = read_file(err_path);
  } catch (...) {
  }
  std::remove(err_path.c_str());
  return r;
}

inline CliResult run_gpreempt(const std::string& args, const std::string& stdin_file = "") {
  std::string cmd = gpreempt_exe() + " " + args;
  if (!stdin_file.empty()) cmd += " <" + stdin_file;
  return run_shell(cmd);
}

}  // namespace gpreempt::testing
