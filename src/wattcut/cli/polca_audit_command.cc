// `wattcut polca audit --log decisions.jsonl --config row.conf`: replays a row controller's
// decision log through the row policy (row_control/decision_log_audit.h) and says whether every
// logged state and command is the policy's for the logged readings. Exit 0 when all are; 1 when a
// line differs (the first ones are printed, FILE:LINE: what the policy does and what the log shows)
// or the log or config cannot be read.
#include <iostream>
#include <memory>
#include <string>

#include "wattcut/cli/command.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/row_control/decision_log_audit.h"

namespace wattcut::cli {
namespace {

struct AuditArgs {
  std::string log_path;
  std::string config_path;
};

int RunAudit(const AuditArgs& args) {
  const std::string name = "polca audit";
  Result<polca::PolcaConfig> config = polca::ReadConfigFile(args.config_path);
  if (!config.ok()) return ReportError(name, config.error());
  Result<row_control::DecisionLogAudit> audit = row_control::AuditDecisionLogFile(args.log_path, *config);
  if (!audit.ok()) return ReportError(name, audit.error());
  std::string policies;
  for (const std::string& p : audit->policies) policies += (policies.empty() ? "" : ", ") + p;
  const std::string counts = std::to_string(audit->decisions) + " decisions, " + std::to_string(audit->commands) +
                             " commands, " + std::to_string(audit->runs) + " controller run" +
                             (audit->runs == 1 ? "" : "s") + (policies.empty() ? "" : " (" + policies + ")");
  if (audit->mismatched_lines == 0) {
    std::cout << "wattcut polca audit: " << args.log_path << ": " << counts
              << ": every state and command is the policy's\n";
    return 0;
  }
  for (const std::string& m : audit->mismatches) std::cerr << m << "\n";
  if (audit->mismatched_lines > static_cast<int64_t>(audit->mismatches.size())) {
    std::cerr << "... and " << audit->mismatched_lines - static_cast<int64_t>(audit->mismatches.size()) << " more\n";
  }
  return ReportError(name, Error{args.log_path + ": " + std::to_string(audit->mismatched_lines) + " of " + counts +
                                 " differ from what the policy decides with " + args.config_path});
}

}  // namespace

void AddPolcaAuditCommand(CLI::App& polca, CommandStatus& status) {
  auto args = std::make_shared<AuditArgs>();
  CLI::App* audit = polca.add_subcommand(
      "audit", "Replay a `polca control` decision log through the row policy and check every command");
  audit->add_option("--log", args->log_path, "The controller's decision log (JSONL, --log of polca control)")
      ->required();
  audit->add_option("--config", args->config_path, "The config file the controller ran with")->required();
  audit->callback([args, &status] { status.exit_code = RunAudit(*args); });
}

}  // namespace wattcut::cli
