// The server's request and response shapes, and the parsers that turn a request body
// into a validated value. Pure functions, no I/O: the HTTP layer, the unit tests and
// the libFuzzer target (fuzz/http_api_fuzz.cc) all call these.
//
// The Zeus pipeline-frequency-optimizer shapes (JobInfo, RankInfo, FrequencySchedule,
// ProfilingResult, OfflineProfilingResult) keep Zeus's field names and meaning, so a
// Zeus client talks to this server unchanged; unknown fields are ignored, as pydantic
// does. Every parser error says which field was wrong and what was expected.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/plan/planner.h"
#include "wattcut/server/job_settings.h"

namespace wattcut::server {

// Zeus JobInfo. job_id must be empty when registering; the server assigns it.
struct JobInfo {
  std::string job_id;
  int pp_degree = 1;
  int dp_degree = 1;
  int tp_degree = 1;
  int world_size = 1;
  std::optional<std::string> job_metadata;
};

// Zeus RankInfo.
struct RankInfo {
  int rank = 0;
  int dp_rank = 0;
  int pp_rank = 0;
  int tp_rank = 0;
  std::vector<int> available_frequencies;  // MHz, as the rank's GPU reports them
};

// Zeus ProfilingResult: what a rank measured while running its last schedule.
// time_breakdown["forward"][i] lists the times of every forward computation of the
// i-th iteration of the profiling window; energy_breakdown has the same structure.
struct ProfilingResult {
  int rank = 0;
  std::vector<double> iter_time;
  std::vector<double> iter_energy;
  std::map<std::string, std::vector<std::vector<double>>> time_breakdown;
  std::map<std::string, std::vector<std::vector<double>>> energy_breakdown;
};

// Zeus OfflineProfilingResult: one rank's mean time (s) and energy (J) of one forward
// and one backward computation at each frequency (MHz). A zero-bubble rank's backward is
// split into its input-gradient pass (backward_input, B) and its weight-gradient pass
// (backward_weight, W), each measured on its own: the backward_input_* and
// backward_weight_* maps (wattcut's, absent from Zeus; empty when not measured). A rank
// sends the whole backward, the split, or both; where it sends only the split, its
// backward at a frequency is B + W there (rank_profile_aggregation.h).
struct RankProfile {
  int rank = 0;
  int dp_rank = 0;
  int pp_rank = 0;
  int tp_rank = 0;
  std::map<int, double> forward_time;
  std::map<int, double> forward_energy;
  std::map<int, double> backward_time;
  std::map<int, double> backward_energy;
  std::map<int, double> backward_input_time;
  std::map<int, double> backward_input_energy;
  std::map<int, double> backward_weight_time;
  std::map<int, double> backward_weight_energy;

  bool has_split_backward() const { return !backward_input_time.empty(); }
};

// POST /register_job body: a JobInfo plus an optional wattcut "planner" object.
struct JobRegistration {
  JobInfo info;
  std::optional<PlannerSettings> planner;
};

// PUT /v1/jobs/{id}/profile body.
struct ProfileUpload {
  std::string csv;
  std::optional<PlannerSettings> planner;
};

// POST /v1/jobs/{id}/stragglers body: exactly one of iteration_time_s, slowdown, or
// recovered=true, for the pipeline with data-parallel rank dp_rank.
struct StragglerReport {
  enum class Kind { kIterationTime, kSlowdown, kRecovered };
  int dp_rank = 0;
  Kind kind = Kind::kIterationTime;
  double value = 0;  // seconds or factor; unused for kRecovered
};

// Parses a request body as JSON; a syntax error is ErrorCode::kMalformed (a 400) naming
// the byte offset.
Result<nlohmann::json> ParseJsonBody(std::string_view body);

// Field validation; every error here is ErrorCode::kInvalidArgument (a 422).
Result<JobRegistration> JobRegistrationFromJson(const nlohmann::json& json);
Result<RankInfo> RankInfoFromJson(const nlohmann::json& json);
Result<ProfilingResult> ProfilingResultFromJson(const nlohmann::json& json);
Result<RankProfile> RankProfileFromJson(const nlohmann::json& json);
Result<ProfileUpload> ProfileUploadFromJson(const nlohmann::json& json);
Result<StragglerReport> StragglerReportFromJson(const nlohmann::json& json);

// The other direction, for storage and responses.
nlohmann::json ToJson(const JobInfo& info);
nlohmann::json ToJson(const RankInfo& info);
nlohmann::json ToJson(const RankProfile& profile);
nlohmann::json ToJson(const ProfilingResult& result);

// A query parameter that must be a non-negative integer ("rank", "offset", ...).
Result<int64_t> ParseNonNegativeInteger(std::string_view name, std::string_view text);

}  // namespace wattcut::server
