#include "wattcut/server/job_store.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace wattcut::server {
namespace {

std::string FreshDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("wattcut_store_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

TEST(JobStore, PersistsAcrossReopen) {
  std::string dir = FreshDir("reopen");
  {
    auto store = JobStore::Open(dir, SyncMode::kNormal);
    ASSERT_TRUE(store.ok()) << store.error().message;
    auto id = (*store)->CreateJob([](int64_t seq) { return "job-" + std::to_string(seq); }, "{}",
                                  "{}", "{\"round\":0}");
    ASSERT_TRUE(id.ok());
    EXPECT_EQ(*id, "job-1");
    ASSERT_TRUE((*store)->PutRank(*id, 0, "{\"rank\":0}").ok());
    ASSERT_TRUE((*store)->PutState(*id, "{\"round\":3}").ok());
    ASSERT_TRUE((*store)->PutProfile(*id, "csv", "csv", "{\"p\":1}").ok());
  }
  auto store = JobStore::Open(dir, SyncMode::kNormal);
  ASSERT_TRUE(store.ok());
  auto jobs = (*store)->LoadAll();
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].state_json, "{\"round\":3}");
  EXPECT_EQ((*jobs)[0].profile_csv, "csv");
  EXPECT_EQ((*jobs)[0].planner_json, "{\"p\":1}");
  ASSERT_EQ((*jobs)[0].ranks.size(), 1u);
  // Sequence numbers are never reused, even after a delete.
  ASSERT_TRUE((*store)->DeleteJob("job-1").ok());
  auto id = (*store)->CreateJob([](int64_t seq) { return "job-" + std::to_string(seq); }, "{}",
                                "{}", "{}");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "job-2");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wattcut::server
