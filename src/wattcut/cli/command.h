// How `wattcut` subcommands plug into the executable. Each subcommand lives in its own
// file (`frontier_command.cc`, ...) and exposes one Add*Command function, called from
// main.cc. A subcommand's callback stores its exit status in `exit_code`; errors are
// printed to stderr as "wattcut <sub>: error: <message>" by ReportError.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "wattcut/base/result.h"

namespace wattcut::cli {

struct CommandStatus {
  int exit_code = 0;
};

// Prints "wattcut NAME: error: MESSAGE" to stderr and returns exit code 1.
int ReportError(const std::string& command_name, const Error& error);
// Prints "wattcut NAME: warning: MESSAGE" to stderr.
void ReportWarning(const std::string& command_name, const std::string& message);

void AddFrontierCommand(CLI::App& app, CommandStatus& status);
void AddEmulateCommand(CLI::App& app, CommandStatus& status);
void AddPolcaCommand(CLI::App& app, CommandStatus& status);
void AddServeCommand(CLI::App& app, CommandStatus& status);
void AddGpuCommand(CLI::App& app, CommandStatus& status);
void AddAgentCommand(CLI::App& app, CommandStatus& status);
void AddPlanCommand(CLI::App& app, CommandStatus& status);
void AddDagCommand(CLI::App& app, CommandStatus& status);
// `polca control`, added by AddPolcaCommand under `polca`.
void AddPolcaControlCommand(CLI::App& polca, CommandStatus& status);
void AddPolcaReplayCommand(CLI::App& polca, CommandStatus& status);
void AddPolcaAuditCommand(CLI::App& polca, CommandStatus& status);
void AddPolcaCalibrateCommand(CLI::App& polca, CommandStatus& status);
void AddPolcaSynthesizeCommand(CLI::App& polca, CommandStatus& status);
void AddScheduleCommand(CLI::App& app, CommandStatus& status);
// `plan schedule`, added by AddPlanCommand under `plan`.
void AddPlanScheduleCommand(CLI::App& plan, CommandStatus& status);
// `agent token`, added by AddAgentCommand under `agent`.
void AddAgentTokenCommand(CLI::App& agent, CommandStatus& status);

}  // namespace wattcut::cli
