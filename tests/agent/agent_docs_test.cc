// docs/agent.md's curl examples, run: the bash block of "With curl", as one script with the real
// curl against a real agent (simulated GPUs, its socket substituted for the docs' one), as root
// (the ceiling calls need the row scope). No call may answer with an error body.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/agent/agent_process.h"
#include "wattcut/base/file_text_testing.h"

namespace wattcut::testing {
namespace {

// The first ```bash block after `heading`.
std::string BashBlockAfter(const std::string& text, const std::string& heading) {
  const size_t at = text.find(heading);
  if (at == std::string::npos) return "";
  const size_t begin = text.find("```bash\n", at);
  if (begin == std::string::npos) return "";
  const size_t end = text.find("```", begin + 8);
  return text.substr(begin + 8, end - begin - 8);
}

TEST(AgentDocs, EveryCurlLineWorks) {
  if (getuid() != 0) GTEST_SKIP() << "the docs' ceiling calls need the row scope: root on the socket";
  fake_nvml::ScopedFakeNvml fake;
  const std::string dir = std::filesystem::path(fake.path()).parent_path() / "docs";
  AgentProcess agent(dir, {"--backend", "simulated", "--gpus", "2"});
  ASSERT_TRUE(agent.running()) << agent.startup_output();
  std::string block = BashBlockAfter(ReadFileText(std::string(WATTCUT_SOURCE_DIR) + "/docs/agent.md"), "### With curl");
  ASSERT_NE(block.find("S=/tmp/agent.sock\n"), std::string::npos) << "the block sets S=/tmp/agent.sock";
  block.replace(block.find("S=/tmp/agent.sock\n"), 18, "S=" + agent.socket() + "\n");
  int calls = 0;
  for (size_t at = block.find("curl "); at != std::string::npos; at = block.find("curl ", at + 1)) ++calls;
  EXPECT_GE(calls, 10);
  const std::string script = dir + "/docs.sh";
  std::ofstream(script) << "set -euo pipefail\n" << block;
  FILE* run = popen(("bash " + script + " 2>&1").c_str(), "r");
  ASSERT_NE(run, nullptr);
  std::string output;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, run)) > 0;) output.append(buffer, n);
  const int status = pclose(run);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("{", 0) == 0) {
      EXPECT_EQ(line.find("\"error\""), std::string::npos) << "a call failed: " << line;
    }
  }
  EXPECT_NE(output.find("DCGM_FI_DEV_POWER_USAGE"), std::string::npos) << output;
  EXPECT_NE(output.find("\"lock\":{\"max_mhz\":1200,\"min_mhz\":1200}"), std::string::npos)
      << "the lease and the lock in one curl process, then the state shows the lock: " << output;
}

}  // namespace
}  // namespace wattcut::testing
