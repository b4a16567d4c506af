// The server's durable state: one SQLite database (data-dir/wattcut.db) in WAL mode.
//
// A write method returns only after its transaction has committed, so the HTTP layer
// acknowledges a write only once it would survive the process being killed. The
// schema is versioned (table `meta`, key `schema_version`); opening a database written
// by a newer schema is refused. All statements are prepared once and reused; one
// connection, serialised by a mutex (SQLite serialises writers anyway).
//
// What is stored per job: its JobInfo and planner settings, every RankInfo, per-rank
// profiles, each rank's latest ProfilingResult, the job's profile CSV (uploaded, or
// aggregated from per-rank profiles), a small state document (barrier round, plan
// selection, stragglers, server-run profiling progress), and the job's computed frontier
// (table `frontiers`, in the wattcut.frontier/v1 format of plan/frontier_file.h) with its
// summary. A stored frontier belongs to the stored profile and planner settings: PutProfile
// and PutPlanner drop it in the same transaction, so one never outlives what it was
// computed from.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "wattcut/base/mutex.h"
#include "wattcut/base/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace wattcut::server {

enum class SyncMode { kNormal, kFull };

struct StoredJob {
  std::string job_id;
  std::string info_json;
  std::string planner_json;
  std::string state_json;
  std::string profile_csv;  // empty: none yet
  std::string profile_source;
  std::string frontier_summary_json;                       // empty: none
  std::string frontier_text;                               // empty: none stored
  std::vector<std::pair<int, std::string>> ranks;          // (rank, RankInfo JSON)
  std::vector<std::pair<int, std::string>> rank_profiles;  // (rank, RankProfile JSON)
  std::vector<std::pair<int, std::string>> results;        // (rank, ProfilingResult JSON)
};

class JobStore {
 public:
  // Opens (creating if needed) DIR/wattcut.db. DIR must exist.
  static Result<std::unique_ptr<JobStore>> Open(const std::string& data_dir, SyncMode sync);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  // A job's profile and its computed frontier, stored with the job when it is created.
  struct InitialProfile {
    std::string_view csv;
    std::string source;
    std::string_view frontier_text;
    std::string frontier_summary_json;
  };

  // Allocates the next job sequence number and inserts the job, in one transaction.
  // `make_id` turns the sequence number into the job id. With `initial`, the job's profile
  // and frontier are stored in the same transaction.
  Result<std::string> CreateJob(const std::function<std::string(int64_t)>& make_id, const std::string& info_json,
                                const std::string& planner_json, const std::string& state_json,
                                const InitialProfile* initial = nullptr);
  Status DeleteJob(const std::string& job_id);
  Status PutRank(const std::string& job_id, int rank, const std::string& info_json);
  Status PutRankProfile(const std::string& job_id, int rank, const std::string& profile_json);
  Status PutResult(const std::string& job_id, int rank, const std::string& result_json);
  Status PutState(const std::string& job_id, const std::string& state_json);
  // The planner settings, or the profile (with the settings it goes with); either drops the
  // stored frontier, in the same transaction.
  Status PutPlanner(const std::string& job_id, const std::string& planner_json);
  Status PutProfile(const std::string& job_id, const std::string& csv, const std::string& source,
                    const std::string& planner_json);
  // The profiling sweep's measurement of one rank and the job state, in one transaction.
  Status PutRankProfileAndState(const std::string& job_id, int rank, const std::string& profile_json,
                                const std::string& state_json);
  Status PutFrontierSummary(const std::string& job_id, const std::string& summary_json);
  // A computed frontier and its summary, in one transaction.
  Status PutFrontier(const std::string& job_id, std::string_view frontier_text, const std::string& summary_json);

  // Fails while a write a caller asked for failed and none as large has succeeded since (a
  // full disk refuses a profile upload long before a small write), and otherwise commits one
  // small write (a heartbeat row in `meta`): fails when the database cannot be written
  // (read-only file or folder, full disk, file-size limit reached). For /healthz.
  Status CheckWritable();

  // Every job, in creation order.
  Result<std::vector<StoredJob>> LoadAll();

 private:
  // Held by every public method for its whole call (one connection, one transaction at a time);
  // the members below are used only under it.
  Mutex mu_;

  JobStore() = default;
  Status Exec(const char* sql);
  Result<sqlite3_stmt*> Prepare(const char* sql);
  // Runs a prepared statement with text/int parameters bound in order. Texts are bound
  // without a copy (a profile CSV can be megabytes): they must outlive the call.
  struct Param {
    enum class Kind { kText, kInt } kind;
    std::string_view text;
    int64_t number = 0;
  };
  Status Run(sqlite3_stmt* stmt, const std::vector<Param>& params);
  std::string LastError() const;
  // Runs one of the write methods' bodies and remembers whether it failed, for CheckWritable:
  // a failed write stays the store's state until a write at least as large succeeds (a full
  // disk that refused a profile still takes a one-row state update).
  template <typename Write, typename Outcome = std::invoke_result_t<Write&>>
  Outcome Recorded(Write&& write) REQUIRES(mu_) {
    bytes_in_write_ = 0;
    auto outcome = write();
    if (!outcome.ok()) {
      failed_write_ = "the last write failed: " + outcome.error().message;
      failed_write_bytes_ = bytes_in_write_;
    } else if (bytes_in_write_ >= failed_write_bytes_) {
      failed_write_.reset();
      failed_write_bytes_ = 0;
    }
    return outcome;
  }

  sqlite3* db_ = nullptr;
  std::optional<std::string> failed_write_ GUARDED_BY(mu_);  // why a write failed; none once one as large succeeded
  size_t failed_write_bytes_ GUARDED_BY(mu_) = 0;            // the text it bound
  size_t bytes_in_write_ = 0;                                // the text bound by the write in progress (Run)
  std::vector<sqlite3_stmt*> statements_;
  sqlite3_stmt* insert_job_ = nullptr;
  sqlite3_stmt* next_seq_ = nullptr;
  sqlite3_stmt* put_rank_ = nullptr;
  sqlite3_stmt* put_rank_profile_ = nullptr;
  sqlite3_stmt* put_result_ = nullptr;
  sqlite3_stmt* put_state_ = nullptr;
  sqlite3_stmt* put_planner_ = nullptr;
  sqlite3_stmt* put_profile_ = nullptr;
  sqlite3_stmt* put_summary_ = nullptr;
  sqlite3_stmt* put_frontier_ = nullptr;
  sqlite3_stmt* drop_frontier_ = nullptr;
  sqlite3_stmt* heartbeat_ = nullptr;
  std::vector<sqlite3_stmt*> delete_job_;
};

}  // namespace wattcut::server
