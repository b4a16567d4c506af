// The training side of the planning server's HTTP API (docs/server.md): what one rank of a
// training job says to `wattcut serve`. Zeus shapes for the Zeus endpoints (register_job,
// register_rank, schedule), wattcut's /v1 endpoints for rank profiles and stragglers.
//
// Every call is synchronous and returns the server's own message on failure, prefixed with the
// request ("POST /register_rank/JOB: HTTP 409: job 'JOB': rank 3 is already registered"), or the
// connection error ("cannot reach the wattcut server at http://...: Connection refused"). The
// error's code says what kind of failure it was, for a caller that retries: kUnavailable (no
// answer, or 5xx), kDeadlineExceeded (504), kNotFound (404), kConflict (409), kMalformed (400 or a
// reply that does not parse), kAborted (410), kInvalidArgument (any other 4xx).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/runtime/deployment.h"
#include "wattcut/runtime/online_profiler.h"
#include "wattcut/runtime/schedule_cursor.h"

namespace wattcut {

struct PlanServerAddress {
  std::string url = {};           // "http://host:port" (http::kPlanServerUrlForm: no https, port 80 by default)
  std::string bearer_token = {};  // empty: none
  double connect_timeout_s = 10;
};

// Zeus JobInfo plus wattcut's planner settings (each 0 / empty: the server's default).
struct TrainingJobInfo {
  int pp_degree = 1;
  int dp_degree = 1;
  int tp_degree = 1;
  int world_size = 1;
  std::string job_metadata = {};  // appended to the job id by the server; empty: none
  int num_microbatches = 0;
  std::string schedule = {};  // "1f1b" | "gpipe" | "interleaved" | "zb-h1"
  int virtual_stages = 0;     // model chunks per rank (interleaved)
  double unit_time_s = 0;
  double p2p_power_w = 0;
};

struct TrainingRankIds {
  int rank = 0;
  int dp_rank = 0;
  int pp_rank = 0;
  int tp_rank = 0;
};

// A straggler report for the pipeline of `dp_rank`: exactly one of the three.
struct StragglerUpdate {
  int dp_rank = 0;
  std::optional<double> slowdown = {};          // k: T' = k x the selected plan's time
  std::optional<double> iteration_time_s = {};  // T'
  bool recovered = false;
};

class PlanServerClient {
 public:
  // Fails when the URL is not "http://HOST:PORT" (PORT optional, 80).
  static Result<PlanServerClient> Create(const PlanServerAddress& address);

  // POST /register_job: the new job's id.
  Result<std::string> RegisterJob(const TrainingJobInfo& job) const;
  // POST /register_rank/{job}.
  Status RegisterRank(const std::string& job_id, const TrainingRankIds& ids,
                      const std::vector<int>& available_freqs_mhz) const;
  // GET /schedule/{job}?rank=N: Zeus's long poll that returns when every rank of the job has
  // asked (a barrier per round). Waits at most `timeout_s`. wattcut's own rank client does not use
  // it (FetchDeployment, in the background).
  Result<RankSchedule> FetchSchedule(const std::string& job_id, int rank, double timeout_s) const;
  // GET /v1/jobs/{job}/deployment?rank=R&step=S&version=V (never waits): the rank's deployment
  // when it differs from `version`, checked (deployment.h; errors name the field).
  Result<DeploymentAnswer> FetchDeployment(const std::string& job_id, int rank, uint64_t step, uint64_t version) const;
  // POST /v1/jobs/{job}/rank_profiles from the online profiler's rows (Zeus
  // OfflineProfilingResult: mean forward/backward time and energy per frequency, and a
  // zero-bubble rank's backward_input / backward_weight as measured).
  Status UploadRankProfile(const std::string& job_id, const TrainingRankIds& ids,
                           const std::vector<ProfiledRow>& rows) const;
  // POST /v1/jobs/{job}/stragglers.
  Status ReportStraggler(const std::string& job_id, const StragglerUpdate& update) const;

  const std::string& url() const { return address_.url; }

 private:
  PlanServerClient(PlanServerAddress address, std::string host, int port)
      : address_(std::move(address)), host_(std::move(host)), port_(port) {}
  // One request; the body of a 200 reply, else the error with the server's message.
  Result<std::string> Call(const std::string& method, const std::string& path, const std::string& body,
                           double read_timeout_s) const;

  PlanServerAddress address_;
  std::string host_;
  int port_ = 80;
};

// The body of POST /v1/jobs/{job}/rank_profiles from the online profiler's rows: forward and
// backward as forward_time / forward_energy and backward_time / backward_energy, a zero-bubble rank's backward_input
// and backward_weight rows as backward_input_time / _energy and backward_weight_time / _energy (each map only when it
// has rows). Fails on another instruction, when forward or every backward has no measurement, or when a frequency has
// only one of B and W.
Result<std::string> RankProfileJson(const TrainingRankIds& ids, const std::vector<ProfiledRow>& rows);
// Exactly one of slowdown, iteration_time_s, recovered; dp_rank >= 0.
Status CheckStragglerUpdate(const StragglerUpdate& update);

// The path segment of a job id, percent-encoded ("+" and other reserved bytes).
std::string EncodeJobIdForPath(const std::string& job_id);

}  // namespace wattcut
