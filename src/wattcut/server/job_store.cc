#include "wattcut/server/job_store.h"

#include <sqlite3.h>

#include <chrono>
#include <string_view>

#include "wattcut/base/unix_time.h"

namespace wattcut::server {

namespace {

// 1: jobs, ranks, rank_profiles, results. 2: + frontiers (a version-1 database gains the
// table when opened; a version-1 server refuses a version-2 database, which it would not
// keep consistent: it does not drop a stored frontier when the profile changes).
constexpr int kSchemaVersion = 2;

constexpr const char* kSchema = R"SQL(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs(
  seq INTEGER PRIMARY KEY,
  job_id TEXT UNIQUE NOT NULL,
  info_json TEXT NOT NULL,
  planner_json TEXT NOT NULL,
  state_json TEXT NOT NULL,
  profile_csv TEXT NOT NULL DEFAULT '',
  profile_source TEXT NOT NULL DEFAULT '',
  frontier_summary_json TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS ranks(
  job_id TEXT NOT NULL, rank INTEGER NOT NULL, info_json TEXT NOT NULL,
  PRIMARY KEY(job_id, rank));
CREATE TABLE IF NOT EXISTS rank_profiles(
  job_id TEXT NOT NULL, rank INTEGER NOT NULL, profile_json TEXT NOT NULL,
  PRIMARY KEY(job_id, rank));
CREATE TABLE IF NOT EXISTS results(
  job_id TEXT NOT NULL, rank INTEGER NOT NULL, result_json TEXT NOT NULL,
  PRIMARY KEY(job_id, rank));
CREATE TABLE IF NOT EXISTS frontiers(
  job_id TEXT PRIMARY KEY, frontier TEXT NOT NULL);
)SQL";

// RAII transaction: rolls back unless committed.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {
    ok_ = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK;
  }
  ~Transaction() {
    if (ok_ && !done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  bool ok() const { return ok_; }
  bool Commit() {
    done_ = true;
    return sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK;
  }

 private:
  sqlite3* db_;
  bool ok_ = false;
  bool done_ = false;
};

std::string ColumnText(sqlite3_stmt* stmt, int col) {
  const unsigned char* text = sqlite3_column_text(stmt, col);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(sqlite3_column_bytes(stmt, col)));
}

}  // namespace

Result<std::unique_ptr<JobStore>> JobStore::Open(const std::string& data_dir, SyncMode sync) {
  std::unique_ptr<JobStore> store(new JobStore());
  std::string path = data_dir + "/wattcut.db";
  if (sqlite3_open_v2(path.c_str(), &store->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    return Error{"cannot open database " + path + ": " + store->LastError()};
  }
  sqlite3_busy_timeout(store->db_, 5000);
  std::string pragmas = "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=";
  pragmas += sync == SyncMode::kFull ? "FULL;" : "NORMAL;";
  if (auto s = store->Exec(pragmas.c_str()); !s) return Error{path + ": " + s.error().message};
  if (auto s = store->Exec(kSchema); !s) return Error{path + ": " + s.error().message};

  // Schema version: set it on a fresh database, refuse a newer one.
  auto get_version = store->Prepare("SELECT value FROM meta WHERE key='schema_version'");
  if (!get_version) return get_version.error();
  int version = 0;
  if (sqlite3_step(*get_version) == SQLITE_ROW) version = std::stoi(ColumnText(*get_version, 0));
  sqlite3_reset(*get_version);
  if (version > kSchemaVersion) {
    return Error{path + ": schema version " + std::to_string(version) + " is newer than this wattcut's (" +
                 std::to_string(kSchemaVersion) + ")"};
  }
  if (version < kSchemaVersion) {
    std::string sql =
        "INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', '" + std::to_string(kSchemaVersion) + "')";
    if (auto s = store->Exec(sql.c_str()); !s) return s.error();
  }

  struct Slot {
    sqlite3_stmt** target;
    const char* sql;
  };
  for (Slot slot : {
           Slot{&store->next_seq_,
                "SELECT COALESCE(MAX(CAST(value AS INTEGER)), 0) FROM meta "
                "WHERE key='last_job_seq'"},
           Slot{&store->insert_job_,
                "INSERT INTO jobs(seq, job_id, info_json, planner_json, state_json) "
                "VALUES(?, ?, ?, ?, ?)"},
           Slot{&store->put_rank_, "INSERT OR REPLACE INTO ranks(job_id, rank, info_json) VALUES(?, ?, ?)"},
           Slot{&store->put_rank_profile_,
                "INSERT OR REPLACE INTO rank_profiles(job_id, rank, profile_json) VALUES(?, ?, ?)"},
           Slot{&store->put_result_, "INSERT OR REPLACE INTO results(job_id, rank, result_json) VALUES(?, ?, ?)"},
           Slot{&store->put_state_, "UPDATE jobs SET state_json=? WHERE job_id=?"},
           Slot{&store->put_planner_, "UPDATE jobs SET planner_json=? WHERE job_id=?"},
           Slot{&store->put_profile_, "UPDATE jobs SET profile_csv=?, profile_source=?, planner_json=? WHERE job_id=?"},
           Slot{&store->put_summary_, "UPDATE jobs SET frontier_summary_json=? WHERE job_id=?"},
           Slot{&store->put_frontier_, "INSERT OR REPLACE INTO frontiers(job_id, frontier) VALUES(?, ?)"},
           Slot{&store->drop_frontier_, "DELETE FROM frontiers WHERE job_id=?"},
           Slot{&store->heartbeat_, "INSERT OR REPLACE INTO meta(key, value) VALUES('last_write_check', ?)"},
       }) {
    auto stmt = store->Prepare(slot.sql);
    if (!stmt) return stmt.error();
    *slot.target = *stmt;
  }
  for (const char* sql : {"DELETE FROM ranks WHERE job_id=?", "DELETE FROM rank_profiles WHERE job_id=?",
                          "DELETE FROM results WHERE job_id=?", "DELETE FROM frontiers WHERE job_id=?",
                          "DELETE FROM jobs WHERE job_id=?"}) {
    auto stmt = store->Prepare(sql);
    if (!stmt) return stmt.error();
    store->delete_job_.push_back(*stmt);
  }
  return store;
}

JobStore::~JobStore() {
  for (sqlite3_stmt* stmt : statements_) sqlite3_finalize(stmt);
  if (db_ != nullptr) sqlite3_close(db_);
}

std::string JobStore::LastError() const { return db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory"; }

Status JobStore::Exec(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message != nullptr ? message : LastError();
    sqlite3_free(message);
    return Error::IOError("sqlite: " + text);
  }
  return Status::Ok();
}

Result<sqlite3_stmt*> JobStore::Prepare(const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK) {
    return Error::IOError("sqlite: cannot prepare '" + std::string(sql) + "': " + LastError());
  }
  statements_.push_back(stmt);
  return stmt;
}

Status JobStore::Run(sqlite3_stmt* stmt, const std::vector<Param>& params) {
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  for (const Param& p : params) bytes_in_write_ += p.text.size();
  for (size_t i = 0; i < params.size(); ++i) {
    int index = static_cast<int>(i) + 1;
    const char* text = params[i].text.data() != nullptr ? params[i].text.data() : "";
    int rc = params[i].kind == Param::Kind::kText
                 ? sqlite3_bind_text64(stmt, index, text, params[i].text.size(), SQLITE_STATIC, SQLITE_UTF8)
                 : sqlite3_bind_int64(stmt, index, params[i].number);
    if (rc != SQLITE_OK) {
      sqlite3_clear_bindings(stmt);
      return Error::IOError("sqlite: bind failed: " + LastError());
    }
  }
  int rc = sqlite3_step(stmt);
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);  // drops the pointers into the caller's texts
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) return Error::IOError("sqlite: " + LastError());
  return Status::Ok();
}

Result<std::string> JobStore::CreateJob(const std::function<std::string(int64_t)>& make_id,
                                        const std::string& info_json, const std::string& planner_json,
                                        const std::string& state_json, const InitialProfile* initial) {
  MutexLock lock(mu_);
  return Recorded([&]() -> Result<std::string> {
    Transaction tx(db_);
    if (!tx.ok()) return Error::IOError("sqlite: cannot begin: " + LastError());
    sqlite3_reset(next_seq_);
    int64_t seq = 0;
    if (sqlite3_step(next_seq_) == SQLITE_ROW) seq = sqlite3_column_int64(next_seq_, 0);
    sqlite3_reset(next_seq_);
    ++seq;
    std::string job_id = make_id(seq);
    if (auto s = Run(insert_job_, {{Param::Kind::kInt, "", seq},
                                   {Param::Kind::kText, job_id},
                                   {Param::Kind::kText, info_json},
                                   {Param::Kind::kText, planner_json},
                                   {Param::Kind::kText, state_json}});
        !s) {
      return s.error();
    }
    if (initial != nullptr) {
      if (auto s = Run(put_profile_, {{Param::Kind::kText, initial->csv},
                                      {Param::Kind::kText, initial->source},
                                      {Param::Kind::kText, planner_json},
                                      {Param::Kind::kText, job_id}});
          !s) {
        return s.error();
      }
      if (auto s = Run(put_frontier_, {{Param::Kind::kText, job_id}, {Param::Kind::kText, initial->frontier_text}});
          !s) {
        return s.error();
      }
      if (auto s =
              Run(put_summary_, {{Param::Kind::kText, initial->frontier_summary_json}, {Param::Kind::kText, job_id}});
          !s) {
        return s.error();
      }
    }
    std::string sql = "INSERT OR REPLACE INTO meta(key, value) VALUES('last_job_seq', '" + std::to_string(seq) + "')";
    if (auto s = Exec(sql.c_str()); !s) return s.error();
    if (!tx.Commit()) return Error::IOError("sqlite: commit failed: " + LastError());
    return job_id;
  });
}

Status JobStore::DeleteJob(const std::string& job_id) {
  MutexLock lock(mu_);
  return Recorded([&]() -> Status {
    Transaction tx(db_);
    if (!tx.ok()) return Error::IOError("sqlite: cannot begin: " + LastError());
    for (sqlite3_stmt* stmt : delete_job_) {
      if (auto s = Run(stmt, {{Param::Kind::kText, job_id}}); !s) return s;
    }
    if (!tx.Commit()) return Error::IOError("sqlite: commit failed: " + LastError());
    return Status::Ok();
  });
}

Status JobStore::PutRank(const std::string& job_id, int rank, const std::string& info_json) {
  MutexLock lock(mu_);
  return Recorded([&]() -> Status {
    return Run(put_rank_,
               {{Param::Kind::kText, job_id}, {Param::Kind::kInt, "", rank}, {Param::Kind::kText, info_json}});
  });
}

Status JobStore::PutRankProfile(const std::string& job_id, int rank, const std::string& profile_json) {
  MutexLock lock(mu_);
  return Recorded([&]() -> Status {
    return Run(put_rank_profile_,
               {{Param::Kind::kText, job_id}, {Param::Kind::kInt, "", rank}, {Param::Kind::kText, profile_json}});
  });
}

Status JobStore::PutResult(const std::string& job_id, int rank, const std::string& result_json) {
  MutexLock lock(mu_);
  return Recorded([&]() -> Status {
    return Run(put_result_,
               {{Param::Kind::kText, job_id}, {Param::Kind::kInt, "", rank}, {Param::Kind::kText, result_json}});
  });
}

Status JobStore::PutState(const std::string& job_id, const std::string& state_json) {
  MutexLock lock(mu_);
  return Recorded([&]() -> Status {
    return Run(put_state_, {{Param::Kind::kText, state_json}, {Param::Kind::kText, job_id}});
  });
}

Status JobStore::PutPlanner(const std::string& job_id, const std::string& planner_json) {
  MutexLock lock(mu_);
  return Recorded([&]() -> Status {
    Transaction tx(db_);
    if (!tx.ok()) return Error::IOError("sqlite: cannot begin: " + LastError());
    if (auto s = Run(put_planner_, {{Param::Kind::kText, planner_json}, {Param::Kind::kText, job_id}}); !s) return s;
    if (auto s = Run(drop_frontier_, {{Param::Kind::kText, job_id}}); !s) return s;
    if (!tx.Commit()) return Error::IOError("sqlite: commit failed: " + LastError());
    return Status::Ok();
  });
}

Status JobStore::PutProfile(const std::string& job_id, const std::string& csv, const std::string& source,
                            const std::string& planner_json) {
  MutexLock lock(mu_);
  return Recorded([&]() -> Status {
    Transaction tx(db_);
    if (!tx.ok()) return Error::IOError("sqlite: cannot begin: " + LastError());
    if (auto s = Run(put_profile_, {{Param::Kind::kText, csv},
                                    {Param::Kind::kText, source},
                                    {Param::Kind::kText, planner_json},
                                    {Param::Kind::kText, job_id}});
        !s) {
      return s;
    }
    if (auto s = Run(drop_frontier_, {{Param::Kind::kText, job_id}}); !s) return s;
    if (!tx.Commit()) return Error::IOError("sqlite: commit failed: " + LastError());
    return Status::Ok();
  });
}

Status JobStore::PutRankProfileAndState(const std::string& job_id, int rank, const std::string& profile_json,
                                        const std::string& state_json) {
  MutexLock lock(mu_);
  return Recorded([&]() -> Status {
    Transaction tx(db_);
    if (!tx.ok()) return Error::IOError("sqlite: cannot begin: " + LastError());
    if (auto s = Run(put_rank_profile_,
                     {{Param::Kind::kText, job_id}, {Param::Kind::kInt, "", rank}, {Param::Kind::kText, profile_json}});
        !s) {
      return s;
    }
    if (auto s = Run(put_state_, {{Param::Kind::kText, state_json}, {Param::Kind::kText, job_id}}); !s) {
      return s;
    }
    if (!tx.Commit()) return Error::IOError("sqlite: commit failed: " + LastError());
    return Status::Ok();
  });
}

Status JobStore::PutFrontierSummary(const std::string& job_id, const std::string& summary_json) {
  MutexLock lock(mu_);
  return Recorded([&]() -> Status {
    return Run(put_summary_, {{Param::Kind::kText, summary_json}, {Param::Kind::kText, job_id}});
  });
}

Status JobStore::PutFrontier(const std::string& job_id, std::string_view frontier_text,
                             const std::string& summary_json) {
  MutexLock lock(mu_);
  return Recorded([&]() -> Status {
    Transaction tx(db_);
    if (!tx.ok()) return Error::IOError("sqlite: cannot begin: " + LastError());
    if (auto s = Run(put_frontier_, {{Param::Kind::kText, job_id}, {Param::Kind::kText, frontier_text}}); !s) return s;
    if (auto s = Run(put_summary_, {{Param::Kind::kText, summary_json}, {Param::Kind::kText, job_id}}); !s) return s;
    if (!tx.Commit()) return Error::IOError("sqlite: commit failed: " + LastError());
    return Status::Ok();
  });
}

Status JobStore::CheckWritable() {
  MutexLock lock(mu_);
  if (failed_write_) return Error::IOError(*failed_write_);
  return Run(heartbeat_, {{Param::Kind::kText, std::to_string(UnixNowMs())}});
}

Result<std::vector<StoredJob>> JobStore::LoadAll() {
  MutexLock lock(mu_);
  std::vector<StoredJob> jobs;
  sqlite3_stmt* stmt = nullptr;
  const char* sql =
      "SELECT jobs.job_id, info_json, planner_json, state_json, profile_csv, profile_source, "
      "frontier_summary_json, frontiers.frontier FROM jobs LEFT JOIN frontiers ON frontiers.job_id = jobs.job_id "
      "ORDER BY seq";
  if (sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr) != SQLITE_OK) {
    return Error::IOError("sqlite: " + LastError());
  }
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    StoredJob job;
    job.job_id = ColumnText(stmt, 0);
    job.info_json = ColumnText(stmt, 1);
    job.planner_json = ColumnText(stmt, 2);
    job.state_json = ColumnText(stmt, 3);
    job.profile_csv = ColumnText(stmt, 4);
    job.profile_source = ColumnText(stmt, 5);
    job.frontier_summary_json = ColumnText(stmt, 6);
    job.frontier_text = ColumnText(stmt, 7);
    jobs.push_back(std::move(job));
  }
  sqlite3_finalize(stmt);
  auto load_table = [&](const char* table_sql, std::vector<std::pair<int, std::string>> StoredJob::*member) -> Status {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, table_sql, -1, &s, nullptr) != SQLITE_OK) {
      return Error::IOError("sqlite: " + LastError());
    }
    for (StoredJob& job : jobs) {
      sqlite3_reset(s);
      sqlite3_bind_text(s, 1, job.job_id.c_str(), -1, SQLITE_TRANSIENT);
      while (sqlite3_step(s) == SQLITE_ROW) {
        (job.*member).emplace_back(sqlite3_column_int(s, 0), ColumnText(s, 1));
      }
    }
    sqlite3_finalize(s);
    return Status::Ok();
  };
  if (auto s = load_table("SELECT rank, info_json FROM ranks WHERE job_id=? ORDER BY rank", &StoredJob::ranks); !s) {
    return s.error();
  }
  if (auto s = load_table("SELECT rank, profile_json FROM rank_profiles WHERE job_id=? ORDER BY rank",
                          &StoredJob::rank_profiles);
      !s) {
    return s.error();
  }
  if (auto s = load_table("SELECT rank, result_json FROM results WHERE job_id=? ORDER BY rank", &StoredJob::results);
      !s) {
    return s.error();
  }
  return jobs;
}

}  // namespace wattcut::server
