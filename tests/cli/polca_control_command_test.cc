// `wattcut polca control`'s start-up checks: nothing is read or sent before the row file, the
// config, the token and every agent check out, and each refusal names what is wrong.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/cli/command_runner.h"

namespace wattcut::testing {
namespace {

class PolcaControlCommand : public ::testing::Test {
 protected:
  PolcaControlCommand() {
    RunWattcut("polca config > " + dir_.path() + "/row.conf");
    std::ofstream(dir_.path() + "/row.token") << "row-token-0123456789abcdef\n";
    ::chmod((dir_.path() + "/row.token").c_str(), 0600);
  }
  std::string Row(const std::string& text) {
    std::ofstream(dir_.path() + "/row.txt") << text;
    return dir_.path() + "/row.txt";
  }
  CommandResult Control(const std::string& row, const std::string& extra = "") {
    return RunWattcut("polca control --row " + row + " --config " + dir_.path() + "/row.conf --token-file " +
                      dir_.path() + "/row.token --mode shadow " + extra);
  }
  TempDir dir_;
};

TEST_F(PolcaControlCommand, AMalformedRowFileNamesItsLine) {
  CommandResult r = Control(Row("s1 http://127.0.0.1:1 high\ns2 http://127.0.0.1:2 medium\n"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("row.txt:2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("medium"), std::string::npos) << r.err;
}

TEST_F(PolcaControlCommand, AnUnreachableAgentAtStartIsAnErrorNamingTheServer) {
  CommandResult r = Control(Row("rack7-s3 http://127.0.0.1:1 low\n"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("rack7-s3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("127.0.0.1:1"), std::string::npos) << r.err;
}

TEST_F(PolcaControlCommand, BadFlagsAreRefusedBeforeAnyAgentIsAsked) {
  const std::string row = Row("s1 http://127.0.0.1:1 high\n");
  CommandResult cap = Control(row, "--policy power-cap");
  EXPECT_EQ(cap.exit_code, 1);
  EXPECT_NE(cap.err.find("power caps are simulated only"), std::string::npos) << cap.err;
  CommandResult duration = Control(row, "--duration 8 hours");
  EXPECT_NE(duration.exit_code, 0);
  CommandResult bad_duration = Control(row, "--duration 8x");
  EXPECT_EQ(bad_duration.exit_code, 1);
  EXPECT_NE(bad_duration.err.find("--duration"), std::string::npos) << bad_duration.err;
  CommandResult token = RunWattcut("polca control --row " + row + " --config " + dir_.path() +
                                   "/row.conf --token-file " + dir_.path() + "/missing --mode enforce");
  EXPECT_EQ(token.exit_code, 1);
  EXPECT_NE(token.err.find("--token-file"), std::string::npos) << token.err;
  CommandResult mode = RunWattcut("polca control --row " + row + " --config " + dir_.path() +
                                  "/row.conf --token-file " + dir_.path() + "/row.token --mode yolo");
  EXPECT_NE(mode.exit_code, 0);
  CommandResult log = Control(row, "--log " + dir_.path() + "/no/such/dir/d.jsonl");
  EXPECT_EQ(log.exit_code, 1);
  EXPECT_NE(log.err.find("--log"), std::string::npos) << log.err;
}

TEST_F(PolcaControlCommand, TrainingServersNeedAPlanningServerGivenAsAUrl) {
  const std::string row = Row("s1 http://127.0.0.1:1 high\nt1 http://127.0.0.1:2 training job+1\n");
  CommandResult missing = Control(row);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("1 training servers need --planning-server URL"), std::string::npos) << missing.err;
  CommandResult bad = Control(row, "--planning-server 127.0.0.1:7787");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("planning server URL '127.0.0.1:7787': expected http://HOST:PORT"), std::string::npos)
      << bad.err;
  CommandResult token =
      Control(row, "--planning-server http://127.0.0.1:7787 --planning-token-file " + dir_.path() + "/missing");
  EXPECT_EQ(token.exit_code, 1);
  EXPECT_NE(token.err.find("--planning-token-file"), std::string::npos) << token.err;
}

}  // namespace
}  // namespace wattcut::testing
