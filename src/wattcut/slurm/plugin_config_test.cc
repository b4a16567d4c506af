#include "wattcut/slurm/plugin_config.h"

#include <gtest/gtest.h>

namespace wattcut::slurm {
namespace {

TEST(PluginConfig, NoWordsLeavesEveryJobAlone) {
  auto config = ParsePluginConfig({});
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->default_mode.kind, WattcutMode::Kind::kOff);
  EXPECT_EQ(config->server_url, "");
  EXPECT_EQ(config->agent_socket, "/run/wattcut/agent.sock");
}

TEST(PluginConfig, ReadsEachSetting) {
  auto config = ParsePluginConfig({"server=http://10.0.0.5:7787", "default=least-energy", "agent_socket=/tmp/a.sock",
                                   "server_token_file=/etc/wattcut/server.token", "scontrol=/opt/slurm/bin/scontrol"});
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->server_url, "http://10.0.0.5:7787");
  EXPECT_EQ(config->default_mode.kind, WattcutMode::Kind::kLeastEnergy);
  EXPECT_EQ(config->agent_socket, "/tmp/a.sock");
  EXPECT_EQ(config->server_token_file, "/etc/wattcut/server.token");
  EXPECT_EQ(config->scontrol, "/opt/slurm/bin/scontrol");
  EXPECT_EQ(ParsePluginConfig({})->scontrol, "/usr/bin/scontrol");
}

TEST(PluginConfig, ABadWordIsNamedWithWhatIsAccepted) {
  const struct {
    std::vector<std::string> words;
    const char* message;
  } cases[] = {
      {{"sever=http://x"},
       "wattcut plugin argument 'sever=http://x': unknown; expected server=URL, default=MODE, agent_socket=PATH, "
       "server_token_file=PATH or scontrol=PATH"},
      {{"fastest"},
       "wattcut plugin argument 'fastest': expected server=URL, default=MODE, agent_socket=PATH, "
       "server_token_file=PATH or scontrol=PATH"},
      {{"server=10.0.0.5:7787"},
       "wattcut plugin argument server= '10.0.0.5:7787': expected http://HOST[:PORT] (the scheme is http)"},
      {{"server=http://"}, "wattcut plugin argument server= 'http://': expected http://HOST[:PORT] (no host)"},
      // The job's ranks, which are handed the URL, speak plain HTTP to the server's address: sbatch
      // refuses what every rank would refuse.
      {{"server=https://planner.example"},
       "wattcut plugin argument server= 'https://planner.example': expected http://HOST[:PORT] (plain HTTP: https "
       "is not supported here; put a TLS proxy in front)"},
      {{"server=http://planner.example/wattcut"},
       "wattcut plugin argument server= 'http://planner.example/wattcut': expected http://HOST[:PORT] (no path: the "
       "API is under /v1 of it)"},
      {{"default=slow"},
       "wattcut plugin argument 'default=slow': --wattcut=slow: expected off, fastest, least-energy "
       "or power:WATTS (watts per GPU, e.g. power:300)"},
      {{"agent_socket=run/a.sock"}, "wattcut plugin argument 'agent_socket=run/a.sock': expected an absolute path"},
      {{"scontrol=scontrol"}, "wattcut plugin argument 'scontrol=scontrol': expected an absolute path"},
  };
  for (const auto& c : cases) {
    auto config = ParsePluginConfig(c.words);
    ASSERT_FALSE(config.ok()) << c.words[0];
    EXPECT_EQ(config.error().message, c.message);
  }
}

}  // namespace
}  // namespace wattcut::slurm
