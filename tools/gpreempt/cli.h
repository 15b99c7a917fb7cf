// Shared plumbing of the `gpreempt` command groups.
//
// Adding a command group: create cmd_<group>.cpp defining
//     void register_<group>_commands(CLI::App& app, gpreempt::cli::Globals& globals);
// declare it below, and add one line to the list in main.cpp. Inside, create subcommands with
// add_command() (it adds --json and the common flags), do the work in the callback, print with
// emit(), and report failures by throwing Failure (exit 1) or UsageError (exit 2).
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <iostream>
#include <stdexcept>
#include <string>

#include "common/hex.h"
#include "common/json_conventions.h"

namespace gpreempt::cli {

enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

// Options every command shares (filled before the command's callback runs).
struct Globals {
  bool json = false;    // machine-readable output on stdout
  bool color = false;   // stdout is a TTY and NO_COLOR is unset
};

// An operational failure (exit 1): the message says what failed and what to do.
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
  // Optional JSON payload printed with --json ({"error": message, ...payload}).
  nlohmann::json detail = nlohmann::json::object();
};
// Bad arguments that CLI11 cannot detect (exit 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The result is already on stdout but incomplete (exit 1, message on stderr, no {"error"}
// document). Thrown by exit_partial(); main() is the one place a failure leaves the program, so
// destructors (contexts that resume their targets, children) run on every path.
struct PartialResult : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A subcommand of `parent` with --json wired to globals.json. `description` is the first line
// of --help; `footer` is the teaching text (examples, units, exit codes).
CLI::App* add_command(CLI::App& parent, Globals& globals, const std::string& name,
                      const std::string& description, const std::string& footer = "");

// JSON text of `j`. Input files can carry bytes that are not UTF-8 (kernel names, error text in
// logs); they become U+FFFD instead of aborting the output.
template <typename Json>
std::string dump_json(const Json& j, int indent = 2) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// Print one --json document on stdout: `j` with "schema_version" first (common/json_conventions.h;
// ordered_json so that it stays first). indent -1: on one line (JSON Lines).
template <typename Json>
void print_json(const Json& j, int indent = 2) {
  std::cout << dump_json(json_conventions::document(nlohmann::ordered_json(j)), indent) << "\n";
}

// Print `human` (people) or `json` (--json, through print_json) to stdout.
void emit(const Globals& globals, const std::string& human, const nlohmann::json& json);

// After a partial result has been printed: "gpreempt: <message>" on stderr, then exit 1 (without
// the {"error"} document a Failure would add after the result already on stdout). Throws
// PartialResult to main().
[[noreturn]] void exit_partial(const std::string& message);

// Column-aligned text table.
std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows);

using gpreempt::hex;  // common/hex.h
// A GPU's id in text tables: "63420 (f7bc)" — the decimal of sysfs (topology gpu_id, per-process
// queues) and the hex of debugfs (mqds, hqds, rls), the two forms users have to match.
std::string gpu_id_text(uint32_t gpu_id);

// The directory of this program (bin/ of a build or an install): where its sibling programs
// (kfdsim, gpreemptd, gpreempt-des) and the build's Python package are found.
std::filesystem::path own_dir();

// `j[key]` when `j` is an object holding an array there, else an empty array: documents from
// another version of gpreemptd may lack a key.
const nlohmann::ordered_json& array_at(const nlohmann::ordered_json& j, const char* key);

// ---- command groups (one file each) ---------------------------------------------------------
void register_info_commands(CLI::App& app, Globals& globals);
void register_queues_commands(CLI::App& app, Globals& globals);
void register_suspend_commands(CLI::App& app, Globals& globals);
void register_bench_commands(CLI::App& app, Globals& globals);
void register_decode_commands(CLI::App& app, Globals& globals);
void register_map_commands(CLI::App& app, Globals& globals);
void register_ps_commands(CLI::App& app, Globals& globals);
void register_log_commands(CLI::App& app, Globals& globals);
void register_demo_commands(CLI::App& app, Globals& globals);
void register_ctl_commands(CLI::App& app, Globals& globals);
void register_doctor_commands(CLI::App& app, Globals& globals);
void register_top_commands(CLI::App& app, Globals& globals);
void register_eval_commands(CLI::App& app, Globals& globals);

}  // namespace gpreempt::cli
