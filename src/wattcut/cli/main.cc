// The `wattcut` executable: one subcommand per file in this folder.
#include <CLI/CLI.hpp>

#include "wattcut/cli/command.h"

int main(int argc, char** argv) {
  CLI::App app{"wattcut: cut the energy and power of GPU clusters running large models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("wattcut ") + WATTCUT_VERSION);

  wattcut::cli::CommandStatus status;
  wattcut::cli::AddFrontierCommand(app, status);
  wattcut::cli::AddEmulateCommand(app, status);
  wattcut::cli::AddPolcaCommand(app, status);
  wattcut::cli::AddServeCommand(app, status);
  wattcut::cli::AddGpuCommand(app, status);

  CLI11_PARSE(app, argc, argv);
  return status.exit_code;
}
