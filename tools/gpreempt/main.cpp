// `gpreempt`: inspect and preempt the KFD compute queues of AMD GPU processes.
//
// Command groups live one per file (cmd_<group>.cpp) and are registered from the list below.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "cli.h"
#include "cli_common.h"
#include "common/child_reaper.h"
#include "common/error.h"
#include "common/json_conventions.h"

namespace {

using Registrar = void (*)(CLI::App&, gpreempt::cli::Globals&);

// One line per command group.
constexpr Registrar kCommandGroups[] = {
    gpreempt::cli::register_info_commands,
    gpreempt::cli::register_queues_commands,
    gpreempt::cli::register_suspend_commands,
    gpreempt::cli::register_bench_commands,
    gpreempt::cli::register_decode_commands,
    gpreempt::cli::register_map_commands,
    gpreempt::cli::register_ps_commands,
    gpreempt::cli::register_log_commands,
    gpreempt::cli::register_demo_commands,
    gpreempt::cli::register_ctl_commands,
    gpreempt::cli::register_doctor_commands,
    gpreempt::cli::register_top_commands,
    gpreempt::cli::register_eval_commands,
};

const char* kFooter =
    "Exit codes: 0 success, 1 operational failure (message on stderr; with --json also an\n"
    "{\"error\": {\"code\", \"errno\", \"message\"}} document on stdout, docs/json.md), 2 usage error.\n"
    "Without an AMD GPU, run under the simulator: kfdsim run -- gpreempt <command> ...\n"
    "Set GPREEMPT_TRACE=1 to trace every KFD ioctl and ptrace call on stderr.\n";

// The --json failure document: {"schema_version", "error": {"code", "errno", "message"}, ...detail}.
void print_error(const nlohmann::json& detail, std::string_view code, std::optional<int> errno_value,
                 std::string_view message) {
  nlohmann::json j = detail.is_object() ? detail : nlohmann::json::object();
  j["error"] = gpreempt::json_conventions::error_object(code, errno_value, message);
  gpreempt::cli::print_json(j);
}

}  // namespace

int main(int argc, char** argv) {
  // `demo` and `experiment` start workloads and models: none may outlive gpreempt.
  gpreempt::kill_children_on_termination();
  gpreempt::cli::Globals globals;
  const char* no_color = std::getenv("NO_COLOR");
  globals.color = ::isatty(STDOUT_FILENO) && !(no_color && *no_color);

  CLI::App app{"gpreempt: preemptive GPU sharing for AMD Instinct GPUs — inspect, suspend and "
               "resume the KFD compute queues of a process (upstream debug-trap ioctls)"};
  app.footer(kFooter);
  app.require_subcommand(1);
  gpreempt::cli_common::add_version_flag(app, "gpreempt");
  for (Registrar r : kCommandGroups) r(app, globals);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {  // --version too (CallForVersion is a Success)
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    // The parse stopped before --json may have been stored: ask the command line itself, so a
    // script that asked for JSON gets the usage failure as the one error document too.
    const bool json = globals.json || std::any_of(argv + 1, argv + argc, [](const char* a) {
                        return std::string_view(a) == "--json";
                      });
    if (json) print_error(nlohmann::json::object(), "usage", std::nullopt, e.what());
    return gpreempt::cli::kExitUsage;
  } catch (const gpreempt::cli::UsageError& e) {
    std::cerr << "gpreempt: " << e.what() << "\n";
    if (globals.json) print_error(nlohmann::json::object(), "usage", std::nullopt, e.what());
    return gpreempt::cli::kExitUsage;
  } catch (const gpreempt::cli::PartialResult& e) {
    std::cerr << "gpreempt: " << e.what() << "\n";
    return gpreempt::cli::kExitFailure;
  } catch (const gpreempt::cli::Failure& e) {
    std::cerr << "gpreempt: " << e.what() << "\n";
    if (globals.json) print_error(e.detail, "failed", std::nullopt, e.what());
    return gpreempt::cli::kExitFailure;
  } catch (const gpreempt::Error& e) {
    std::cerr << "gpreempt: " << e.what() << "\n";
    if (globals.json)
      print_error(nlohmann::json::object(), gpreempt::json_conventions::errno_name(e.code()), e.code(), e.what());
    return gpreempt::cli::kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "gpreempt: " << e.what() << "\n";
    if (globals.json) print_error(nlohmann::json::object(), "internal", std::nullopt, e.what());
    return gpreempt::cli::kExitFailure;
  }
  return gpreempt::cli::kExitOk;
}
