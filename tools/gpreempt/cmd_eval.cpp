// `gpreempt eval`: the evaluation harness (docs/evaluation.md). The experiments, statistics,
// figures and report are Python (gpreempt.eval, matplotlib); this command runs Debian's
// /usr/bin/python3 -m gpreempt.eval with every argument after `eval` unchanged, with the package
// of this build or install on its path and --bin-dir pointing at the directory of this program,
// where gpreempt-des, kfdsim and gpreempt itself are found. Its exit code is Python's: 0 ok,
// 1 operational failure, 2 usage.
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"
#include "common/error.h"

namespace gpreempt::cli {

namespace {

namespace fs = std::filesystem;

// The gpreempt Python package of this build (<build>/python, next to <build>/bin) or of this
// install prefix (<prefix>/lib/python3*/…-packages); empty when the interpreter must find it.
std::string package_parent(const fs::path& bin) {
  const fs::path build = bin.parent_path() / "python";
  if (fs::exists(build / "gpreempt" / "eval" / "__main__.py")) return build.string();
  std::error_code ec;
  for (const auto& lib : {bin.parent_path() / "lib", bin.parent_path() / "lib64"}) {
    for (fs::recursive_directory_iterator it(lib, ec), end; !ec && it != end; it.increment(ec)) {
      if (it.depth() > 3) {
        it.disable_recursion_pending();
        continue;
      }
      if (it->path().filename() == "eval" && it->path().parent_path().filename() == "gpreempt" &&
          fs::exists(it->path() / "__main__.py"))
        return it->path().parent_path().parent_path().string();
    }
  }
  return {};
}

[[noreturn]] void run_eval(const std::vector<std::string>& args) {
  const fs::path bin = own_dir();
  const char* py_env = std::getenv("GPREEMPT_PYTHON");
  const std::string python = py_env && *py_env ? py_env : "/usr/bin/python3";
  if (::access(python.c_str(), X_OK) != 0)
    throw Failure("gpreempt eval needs " + python +
                  " (Debian's python3 with python3-matplotlib; scripts/install-deps.sh installs them)");
  const std::string pkg = package_parent(bin);
  if (!pkg.empty()) {
    const char* old = std::getenv("PYTHONPATH");
    const std::string path = old && *old ? pkg + ":" + old : pkg;
    ::setenv("PYTHONPATH", path.c_str(), 1);
  }
  std::vector<std::string> argv_s = {python, "-m", "gpreempt.eval", "--bin-dir", bin.string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::cout.flush();
  ::execv(argv[0], argv.data());
  throw Failure("cannot run " + python + ": " + errno_text(errno));
}

}  // namespace

void register_eval_commands(CLI::App& app, Globals&) {
  CLI::App* cmd = app.add_subcommand(
      "eval",
      "The evaluation: gpreempt against every baseline in simulated time (des) or live under kfdsim; "
      "results.json, PNG figures, report.md");
  // Everything after `eval`, --help included, belongs to gpreempt.eval's own parser.
  cmd->prefix_command();
  cmd->set_help_flag();
  cmd->footer(
      "Usage: gpreempt eval list [--json]\n"
      "       gpreempt eval run NAME [--engine des|live] [--out DIR] [--requests N]\n"
      "                              [--seeds N | --seed S[,S...]] [--quick] [--strict]\n"
      "       gpreempt eval table DIR/results.json    (its results as a Markdown table)\n"
      "       gpreempt eval run --help     (every option)\n"
      "Examples:\n"
      "  gpreempt eval list\n"
      "  gpreempt eval run resnet18-vs-resnet50-train --out eval-out/headline\n"
      "  gpreempt eval run tc1-basic --engine live --out eval-out/tc1-live\n"
      "Runs /usr/bin/python3 -m gpreempt.eval (GPREEMPT_PYTHON overrides the interpreter) with the\n"
      "gpreempt-des engine next to this program. Exit codes: 0 ok (checks may FAIL: report.md;\n"
      "--strict exits 1 then), 1 operational failure, 2 usage.");
  cmd->callback([cmd] { run_eval(cmd->remaining()); });
}

}  // namespace gpreempt::cli
