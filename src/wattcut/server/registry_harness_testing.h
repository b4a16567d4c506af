// For the registry's unit tests: a JobRegistry over a real JobStore in a temporary folder,
// without a server process (the job_registry_*_test files and job_commit_test), and the
// temporary folder itself (startup_profiles_test too).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "wattcut/server/job_registry.h"
#include "wattcut/server/job_store.h"
#include "wattcut/server/metrics.h"

namespace wattcut::server::testing {

// An empty folder under the system's temporary folder, named for the test and the process,
// removed with its contents when the object goes.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_((std::filesystem::temp_directory_path() /
               ("wattcut_registry_test_" + name + "_" + std::to_string(::getpid())))
                  .string()) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Writes `text` to the file `name` in the folder; its path.
  std::string Write(const std::string& name, const std::string& text) const {
    std::string path = path_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

 private:
  std::string path_;
};

// Makes the real store in `dir` refuse every write while it is on, as a full disk or a failing
// device would: a second connection to the database adds triggers that abort each insert,
// update and delete of the job tables (the store's own statements see them at their next run).
// Reads go on working.
class StoreFault {
 public:
  explicit StoreFault(const std::string& dir) {
    EXPECT_EQ(sqlite3_open((dir + "/wattcut.db").c_str(), &db_), SQLITE_OK);
    sqlite3_busy_timeout(db_, 5000);
  }
  ~StoreFault() {
    Off();
    sqlite3_close(db_);
  }
  StoreFault(const StoreFault&) = delete;
  StoreFault& operator=(const StoreFault&) = delete;

  // Refuses the writes of `tables` (every job table by default).
  void On(std::vector<std::string> tables = {"jobs", "ranks", "rank_profiles", "results", "frontiers"}) {
    Run(true, tables);
  }
  void Off() { Run(false, {"jobs", "ranks", "rank_profiles", "results", "frontiers"}); }

 private:
  void Run(bool on, const std::vector<std::string>& tables) {
    std::string sql;
    for (const std::string& table : tables) {
      for (const char* op : {"INSERT", "UPDATE", "DELETE"}) {
        const std::string name = std::string("fault_") + table + "_" + op;
        sql += on ? "CREATE TRIGGER IF NOT EXISTS " + name + " BEFORE " + op + " ON " + table +
                        " BEGIN SELECT RAISE(ABORT, 'injected store failure'); END;"
                  : "DROP TRIGGER IF EXISTS " + name + ";";
      }
    }
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
    sqlite3_free(error);
  }
  sqlite3* db_ = nullptr;
};

// Every stored row of job `id`, as text: two equal snapshots are the same stored job.
inline std::string StoredRows(JobStore& store, const std::string& id) {
  auto all = store.LoadAll();
  EXPECT_TRUE(all.ok()) << all.error().message;
  if (!all.ok()) return {};
  for (const StoredJob& j : *all) {
    if (j.job_id != id) continue;
    std::string out = j.info_json + "\n" + j.planner_json + "\n" + j.state_json + "\n" + j.profile_source + "\n" +
                      j.profile_csv + "\n" + j.frontier_summary_json + "\n" + j.frontier_text + "\n";
    for (const auto* rows : {&j.ranks, &j.rank_profiles, &j.results}) {
      for (const auto& [rank, text] : *rows) out += std::to_string(rank) + ":" + text + "\n";
      out += "--\n";
    }
    return out;
  }
  return "(no such job)";
}

// The store in `dir` opened and loaded into a registry (a second one on the same folder is a
// restart).

struct RegistryHarness {
  explicit RegistryHarness(const std::string& dir, JobRegistry::Options options = {}) {
    auto opened = JobStore::Open(dir, SyncMode::kNormal);
    EXPECT_TRUE(opened.ok()) << opened.error().message;
    store = std::move(*opened);
    registry = std::make_unique<JobRegistry>(*store, metrics, std::move(options));
    Status loaded = registry->Load();
    EXPECT_TRUE(loaded.ok()) << loaded.error().message;
  }
  // The answer's JSON; a failed answer fails the test and gives null.
  nlohmann::json Ok(const Answer& answer) {
    EXPECT_TRUE(answer.ok()) << answer.error().message;
    return answer.ok() ? nlohmann::json::parse(*answer) : nlohmann::json();
  }
  // The frontier's status once it is no longer computing (bounded: 60,000 naps of 1 ms).
  nlohmann::json FrontierWhenDone(const std::string& id) {
    nlohmann::json status;
    for (int naps = 0; naps < 60000; ++naps) {
      status = Ok(registry->FrontierStatus(id));
      if (status["state"] != "computing") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return status;
  }

  Metrics metrics;
  std::unique_ptr<JobStore> store;
  std::unique_ptr<JobRegistry> registry;
};

// The stages of each pipeline of the job RegisterJobOfTwoPipelines registers.
inline constexpr int kTwoPipelineJobStages = 2;

// A job of pp 2 x dp 2, 4 microbatches, and the first `ranks` of its ranks: ranks 0, 1 are
// pipeline 0 (dp 0, stages 0 and 1), ranks 2, 3 pipeline 1; each lists 1410, 1200 and 900 MHz.
// Its id.
inline std::string RegisterJobOfTwoPipelines(RegistryHarness& r, int ranks = 4) {
  JobRegistration reg;
  reg.info.pp_degree = kTwoPipelineJobStages;
  reg.info.dp_degree = 2;
  reg.info.world_size = 4;
  PlannerSettings planner;
  planner.num_microbatches = 4;
  reg.planner = planner;
  std::string id = r.Ok(r.registry->RegisterJob(reg)).get<std::string>();
  for (int rank = 0; rank < ranks; ++rank) {
    r.Ok(r.registry->RegisterRank(id, RankInfo{rank, rank / 2, rank % 2, 0, {1410, 1200, 900}}));
  }
  return id;
}

// The plan index rank `rank` of job `id` is given by a fresh fetch (version 0: the whole
// deployment) at step `step`; a deployment that is not a plan fails the test.
inline int PlanIndexOf(RegistryHarness& r, const std::string& id, int rank, int64_t step = 0) {
  nlohmann::json d = r.Ok(r.registry->FetchDeployment(id, rank, step, 0));
  EXPECT_EQ(d["mode"], "plan") << d.dump();
  return d.value("plan_index", -1);
}

// A job of one rank, 2 microbatches, its rank registered with 1410 and 1200 MHz: the smallest job
// a profiling sweep runs on. Its id.
inline std::string RegisterOneRankJob(RegistryHarness& r) {
  JobRegistration reg;
  reg.info.pp_degree = 1;
  reg.info.world_size = 1;
  PlannerSettings planner;
  planner.num_microbatches = 2;
  reg.planner = planner;
  std::string id = r.Ok(r.registry->RegisterJob(reg)).get<std::string>();
  r.Ok(r.registry->RegisterRank(id, RankInfo{0, 0, 0, 0, {1410, 1200}}));
  return id;
}

}  // namespace wattcut::server::testing
