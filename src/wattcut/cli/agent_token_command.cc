// `wattcut agent token`: issues a zeusd token (agent/zeusd_token.h) signed with the agent's zeusd
// signing key, for a user of Zeus whose daemon is the node agent (docs/agent.md, "Running Zeus
// through wattcut"). Prints the token and a newline on stdout, as `zeusd token issue` does.
#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "wattcut/agent/zeusd_token.h"
#include "wattcut/base/unix_time.h"
#include "wattcut/cli/command.h"

namespace wattcut::cli {
namespace {

struct AgentTokenArgs {
  std::string signing_key;
  std::string sub;
  std::vector<std::string> scopes;
  std::string expires = "never";
};

int Run(const AgentTokenArgs& args) {
  const std::string name = "agent token";
  if (args.sub.empty()) return ReportError(name, Error{"--sub: the token's user name must not be empty"});
  std::vector<agent::ZeusdGroup> scopes;
  for (const std::string& list : args.scopes) {
    auto groups = agent::ParseZeusdGroups(list);
    if (!groups.ok()) return ReportError(name, groups.error().WithContext("--scopes: "));
    scopes.insert(scopes.end(), groups->begin(), groups->end());
  }
  auto lifetime = agent::ParseZeusdTokenLifetime(args.expires);
  if (!lifetime.ok()) return ReportError(name, lifetime.error().WithContext("--expires: "));
  auto key = agent::ZeusdSigningKey::ReadFile(args.signing_key);
  if (!key.ok()) return ReportError(name, key.error().WithContext("--signing-key: "));
  agent::ZeusdClaims claims{args.sub, scopes, std::nullopt};
  if (*lifetime) {
    const int64_t now_s = static_cast<int64_t>(UnixNowS());
    claims.exp_unix_s = now_s + **lifetime;
  }
  std::cout << agent::IssueZeusdToken(claims, *key) << "\n";
  return 0;
}

}  // namespace

void AddAgentTokenCommand(CLI::App& agent, CommandStatus& status) {
  auto args = std::make_shared<AgentTokenArgs>();
  CLI::App* cmd = agent.add_subcommand("token",
                                       "Issue a zeusd token (HS256 JWT) for Zeus clients of this agent's zeusd API: "
                                       "ZEUSD_TOKEN=$(wattcut agent token ...)");
  cmd->add_option("--signing-key", args->signing_key,
                  "The agent's zeusd signing key file (its bytes are the HMAC key; mode 0600)")
      ->required();
  cmd->add_option("--sub", args->sub, "The user the token names (its 'sub' claim)")->required();
  cmd->add_option("--scopes", args->scopes,
                  "zeusd API groups it may use, comma-separated: gpu-control, gpu-read, cpu-read (none: only "
                  "/auth/whoami)")
      ->delimiter(',')
      ->expected(0, -1);
  cmd->add_option("--expires", args->expires, "Lifetime: 1h, 7d, 30d, 2weeks, ... or never")->capture_default_str();
  cmd->callback([args, &status] { status.exit_code = Run(*args); });
}

}  // namespace wattcut::cli
