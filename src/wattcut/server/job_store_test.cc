#include "wattcut/server/job_store.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace wattcut::server {
namespace {

std::string FreshDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("wattcut_store_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

TEST(JobStore, PersistsAcrossReopen) {
  std::string dir = FreshDir("reopen");
  {
    auto store = JobStore::Open(dir, SyncMode::kNormal);
    ASSERT_TRUE(store.ok()) << store.error().message;
    auto id =
        (*store)->CreateJob([](int64_t seq) { return "job-" + std::to_string(seq); }, "{}", "{}", "{\"round\":0}");
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
  auto id = (*store)->CreateJob([](int64_t seq) { return "job-" + std::to_string(seq); }, "{}", "{}", "{}");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "job-2");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wattcut::server

namespace wattcut::server {
namespace {

TEST(JobStore, AFrontierIsStoredAndDroppedWithTheProfileOrPlannerItBelongsTo) {
  std::string dir = FreshDir("frontier");
  auto store = JobStore::Open(dir, SyncMode::kNormal);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto id = (*store)->CreateJob([](int64_t seq) { return "job-" + std::to_string(seq); }, "{}", "{}", "{}");
  ASSERT_TRUE(id.ok());
  auto stored_frontier = [&]() {
    auto jobs = (*store)->LoadAll();
    EXPECT_TRUE(jobs.ok());
    return jobs->at(0).frontier_text;
  };
  ASSERT_TRUE((*store)->PutFrontier(*id, "F1", "{\"num_points\":1}").ok());
  EXPECT_EQ(stored_frontier(), "F1");
  EXPECT_EQ((*store)->LoadAll()->at(0).frontier_summary_json, "{\"num_points\":1}");
  ASSERT_TRUE((*store)->PutPlanner(*id, "{\"num_microbatches\":8}").ok());
  EXPECT_EQ(stored_frontier(), "");
  ASSERT_TRUE((*store)->PutFrontier(*id, "F2", "{}").ok());
  ASSERT_TRUE((*store)->PutProfile(*id, "csv", "csv", "{}").ok());
  EXPECT_EQ(stored_frontier(), "");
  ASSERT_TRUE((*store)->PutFrontier(*id, "F3", "{}").ok());
  ASSERT_TRUE((*store)->DeleteJob(*id).ok());
  EXPECT_TRUE((*store)->LoadAll()->empty());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wattcut::server
