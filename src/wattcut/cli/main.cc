// The `wattcut` executable: one subcommand per file in this folder.
//
// Exit codes: 0 success; 1 the command failed (bad input file, bad value, a failure
// while running), with "wattcut SUB: error: ..." on stderr; 2 the command line itself is
// wrong (unknown option, a value of the wrong type, a missing argument), with
// "wattcut: usage error: ..." on stderr. No input ends the process with a signal.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <new>

#include "wattcut/base/printable_text.h"
#include "wattcut/cli/command.h"

namespace {

constexpr int kUsageError = 2;

int Run(int argc, char** argv) {
  CLI::App app{"wattcut: cut the energy and power of GPU clusters running large models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("wattcut ") + WATTCUT_VERSION);

  wattcut::cli::CommandStatus status;
  wattcut::cli::AddFrontierCommand(app, status);
  wattcut::cli::AddPlanCommand(app, status);
  wattcut::cli::AddDagCommand(app, status);
  wattcut::cli::AddEmulateCommand(app, status);
  wattcut::cli::AddPolcaCommand(app, status);
  wattcut::cli::AddServeCommand(app, status);
  wattcut::cli::AddGpuCommand(app, status);
  wattcut::cli::AddAgentCommand(app, status);
  wattcut::cli::AddScheduleCommand(app, status);

  // CLI11 says only "A subcommand is required" for a mistyped one.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::cerr << "wattcut: usage error: unknown command '" << wattcut::PrintableText(argv[1]) << "' (expected one of "
                << names << ")\nRun with --help for more information.\n";
      return kUsageError;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version: printed, exit 0
  } catch (const CLI::ParseError& e) {
    // CLI11 quotes the user's argument in its message: never raw control bytes.
    std::cerr << "wattcut: usage error: " << wattcut::PrintableText(e.what(), 400) << "\n"
              << "Run with --help for more information.\n";
    return kUsageError;
  }
  return status.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  // A last line of defence: the commands return errors as values, so reaching these means
  // a bug or an exhausted machine, which is still reported as an error, not a signal.
  try {
    return Run(argc, argv);
  } catch (const std::bad_alloc&) {
    // Inside docs/limits.md's bounds every command fits in a few GB: a memory limit below what
    // the input needs (ulimit -v, a container's) is the likely cause, and the message says so.
    std::cerr << "wattcut: error: out of memory: the input needs more memory than this process may have (a ulimit "
                 "-v or a container's limit?); docs/limits.md lists what each input's bounds take\n";
  } catch (const std::exception& e) {
    std::cerr << "wattcut: error: " << wattcut::PrintableText(e.what(), 400) << "\n";
  }
  return 1;
}
