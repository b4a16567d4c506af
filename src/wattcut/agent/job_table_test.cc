#include "wattcut/agent/job_table.h"

#include <gtest/gtest.h>

namespace wattcut::agent {
namespace {

NodeJob Job(const std::string& id, int uid, std::vector<int> gpus, const std::string& credential) {
  NodeJob job;
  job.id = id;
  job.uid = uid;
  job.gpus = std::move(gpus);
  job.credential = credential;
  return job;
}

TEST(JobTable, ACredentialNamesItsJobUntilTheJobEndsAndThenSaysItEnded) {
  JobTable table;
  ASSERT_TRUE(table.Register(Job("1", 1000, {3, 1, 1}, "credential-of-job-one")).ok());
  EXPECT_EQ(table.Find("1")->gpus, (std::vector<int>{1, 3})) << "sorted, once each";
  auto match = table.FindCredential("credential-of-job-one");
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->job_id, "1");
  EXPECT_FALSE(match->ended);
  EXPECT_FALSE(table.FindCredential("credential-of-job-on").has_value());
  EXPECT_FALSE(table.FindCredential("").has_value());
  ASSERT_TRUE(table.End("1").ok());
  EXPECT_EQ(table.Find("1"), nullptr);
  match = table.FindCredential("credential-of-job-one");
  ASSERT_TRUE(match.has_value());
  EXPECT_TRUE(match->ended);
  EXPECT_EQ(table.End("1").error().code, ErrorCode::kNotFound);
}

TEST(JobTable, OnlyTheLatestEndedCredentialsAreRemembered) {
  JobTable table;
  for (size_t i = 0; i <= JobTable::kRememberedEndedJobs; ++i) {
    const std::string id = std::to_string(i);
    ASSERT_TRUE(table.Register(Job(id, 1, {0}, "credential-" + id)).ok());
    ASSERT_TRUE(table.End(id).ok());
  }
  EXPECT_FALSE(table.FindCredential("credential-0").has_value()) << "the oldest is forgotten";
  EXPECT_TRUE(table.FindCredential("credential-1").has_value());
}

TEST(JobTable, JobIds) {
  EXPECT_TRUE(CheckJobId("4242", "job").ok());
  EXPECT_TRUE(CheckJobId("4242_7.batch-x", "job").ok());
  EXPECT_FALSE(CheckJobId("", "job").ok());
  // Only dots names no job (before: ".." was registered).
  EXPECT_FALSE(CheckJobId("..", "job").ok());
  EXPECT_FALSE(CheckJobId(".", "job").ok());
  EXPECT_TRUE(CheckJobId("4242.0", "job").ok());
  EXPECT_FALSE(CheckJobId(std::string(65, '1'), "job").ok());
  auto slash = CheckJobId("../etc", "the path's job");
  ASSERT_FALSE(slash.ok());
  EXPECT_EQ(slash.error().message,
            "the path's job '../etc': expected 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-', not only dots "
            "(a job id)");
}

}  // namespace
}  // namespace wattcut::agent
