// `wattcut serve --profile-for-new-jobs CSV` refuses to start, before it listens, on every
// profile it cannot use, with the reason and exit status 1: a CSV the reader rejects (its
// message names the file and the line), a file that cannot be read, two profiles of one
// stage count, and the option without --microbatches (the frontiers are computed with the
// default planner settings). The planning itself is in server_zeus_compat_test.cc.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/server/server_process.h"
#include "tests/server/test_profiles.h"

namespace wattcut::testing {
namespace {

std::string WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The CSV of TestProfileCsv(stages) with line `line`'s time replaced by "x".
std::string CsvWithBadTime(int stages, int line) {
  std::string csv = TestProfileCsv(stages);
  size_t start = 0;
  for (int l = 1; l < line; ++l) start = csv.find('\n', start) + 1;
  size_t time = start;
  for (int comma = 0; comma < 3; ++comma) time = csv.find(',', time) + 1;
  csv.replace(time, csv.find(',', time) - time, "x");
  return csv;
}

void ExpectRefused(const std::vector<std::string>& args, const std::string& message) {
  ServerProcess server(args);
  EXPECT_FALSE(server.running());
  EXPECT_EQ(server.startup_exit_status(), 1) << server.startup_output();
  EXPECT_NE(server.startup_output().find("wattcut serve: error: " + message), std::string::npos)
      << server.startup_output();
  EXPECT_EQ(server.startup_output().find("listening on"), std::string::npos) << server.startup_output();
}

TEST(ServeStartupProfiles, ACsvTheReaderRejectsIsRefusedWithItsFileAndLine) {
  ScopedTempDir files("startup_refusals");
  const std::string bad = WriteFile(files.path() + "/bad.csv", CsvWithBadTime(2, 3));
  ExpectRefused({"--microbatches", "4", "--profile-for-new-jobs", bad},
                "--profile-for-new-jobs: " + bad + ":3: column 'time'");
  const std::string absent = files.path() + "/absent.csv";
  ExpectRefused({"--microbatches", "4", "--profile-for-new-jobs", absent},
                "--profile-for-new-jobs: " + absent + ": cannot open file for reading");
}

TEST(ServeStartupProfiles, TwoProfilesOfOneStageCountAreRefused) {
  ScopedTempDir files("startup_refusals");
  const std::string a = WriteFile(files.path() + "/a.csv", TestProfileCsv(2));
  const std::string b = WriteFile(files.path() + "/b.csv", TestProfileCsv(2, 1300));
  ExpectRefused({"--microbatches", "4", "--profile-for-new-jobs", a, "--profile-for-new-jobs", b},
                "--profile-for-new-jobs: profiles " + a + " and " + b +
                    " both have 2 stages; give one profile per stage count (jobs with pp_degree 2 get it)");
}

TEST(ServeStartupProfiles, TheOptionNeedsMicrobatches) {
  ScopedTempDir files("startup_refusals");
  const std::string a = WriteFile(files.path() + "/a.csv", TestProfileCsv(2));
  ExpectRefused({"--profile-for-new-jobs", a},
                "--profile-for-new-jobs needs --microbatches: each profile's frontier is computed at start-up with "
                "the default planner settings (--microbatches, --schedule, --unit-time, --p2p-power)");
}

}  // namespace
}  // namespace wattcut::testing
