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

// wattcut's planner settings for a job (PlannerOptions as JSON). num_microbatches 0
// means "not set yet".
struct PlannerSettings {
  int num_microbatches = 0;
  PipelineScheduleKind schedule = PipelineScheduleKind::k1F1B;
  // Model chunks per rank (the interleaved schedule): the job's profile stays one stage per
  // pp rank, each chunk planned with its rank's rows (ComputeFrontierFromDeviceProfile).
  int virtual_stages = 1;
  double unit_time_s = 0.001;
  double noise_factor = 0.95;
  CostModelKind cost_model = CostModelKind::kExponential;
  double p2p_power_w = 0;
  // Server-run profiling: frequencies below this are not swept; 0 sweeps them all.
  int profiling_min_freq_mhz = 0;

  PlannerOptions ToPlannerOptions() const;
  bool operator==(const PlannerSettings&) const = default;
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

// PUT /v1/jobs/{id}/plan body: exactly one of point ("fastest" | "min_energy"),
// index, or iteration_time_s.
struct PlanSelection {
  enum class Kind { kFastest, kMinEnergy, kIndex, kIterationTime };
  Kind kind = Kind::kFastest;
  double value = 0;  // the index or the time

  nlohmann::json ToJson() const;
  static Result<PlanSelection> FromJson(const nlohmann::json& json);
};

// PUT /v1/jobs/{id}/power_target body: exactly one of peak_power_per_gpu_w (the largest
// average power of any 1-s window of an iteration, per GPU: what a row breaker sees) or
// avg_power_per_gpu_w (the iteration's average power per GPU), in watts (> 0, finite), and an
// optional "reason" (at most kPowerTargetReasonMaxBytes bytes of text, kept for the logs and
// shown in the answer), and an optional "lease_s" (1 s to kPowerTargetMaxLeaseS): the target
// lapses that long after it was set unless it is set again, as a row controller's clock
// ceilings do, so a controller that dies does not cap a job for ever.
struct PowerTarget {
  enum class Kind { kPeak1s, kAverage };
  Kind kind = Kind::kPeak1s;
  double per_gpu_w = 0;
  std::string reason;
  double lease_s = 0;            // 0: no lease
  double expires_at_unix_s = 0;  // set by the server from lease_s when the target is set

  // "peak_1s" or "average" (the metrics' kind label).
  const char* KindName() const { return kind == Kind::kPeak1s ? "peak_1s" : "average"; }
  // The request's shape: {"peak_power_per_gpu_w": W, "reason": "...", "lease_s": L} (reason and
  // lease when set), plus "expires_at_unix_s" with a lease (what the job's state stores).
  nlohmann::json ToJson() const;
  static Result<PowerTarget> FromJson(const nlohmann::json& json);
  bool operator==(const PowerTarget&) const = default;
};
inline constexpr size_t kPowerTargetReasonMaxBytes = 512;
inline constexpr double kPowerTargetMaxLeaseS = 86400;

// PUT /v1/jobs/{id}/deadline_schedule: finish the job's remaining iterations by a deadline at the
// least cost, carbon or energy (deadline/deadline_scheduler.h, docs/deadline.md), the same inputs
// as `wattcut plan schedule`, the series as CSV text:
//   {"iterations": N, "deadline": "2026-12-14T16:48Z", "start": "..." (default: when received),
//    "objective": "cost|carbon|energy", "price_csv": "time,price\n...", "carbon_csv": "...",
//    "power_budget_csv": "time,watts_per_gpu\n...", "budget_power": "peak|average",
//    "pipelines": P (default: the job's dp_degree), "replan_margin": 0.02}
// The job's state stores it with "from_step" (the job's step its iterations count from) and
// "replans"; a replan moves "start", "iterations" and "from_step" to the moment of the replan.
struct DeadlineScheduleSpec {
  double iterations = 0;
  std::string deadline;   // ISO 8601
  std::string start;      // ISO 8601; empty in a request: the server's time
  std::string objective;  // empty: cost with a price, else carbon with a carbon series, else energy
  std::string price_csv, carbon_csv, power_budget_csv;
  std::string budget_power;  // empty: peak when the frontier has it
  int pipelines = 0;         // 0: the job's dp_degree
  double replan_margin = 0.02;
  int64_t from_step = 0;
  int replans = 0;

  nlohmann::json ToJson() const;
  static Result<DeadlineScheduleSpec> FromJson(const nlohmann::json& json);
  bool operator==(const DeadlineScheduleSpec&) const = default;
};
inline constexpr size_t kDeadlineSeriesMaxBytes = size_t{4} << 20;

// Parses a request body as JSON; a syntax error is ErrorCode::kMalformed (a 400) naming
// the byte offset.
Result<nlohmann::json> ParseJsonBody(std::string_view body);

// Field validation; every error here is ErrorCode::kInvalidArgument (a 422).
Result<JobRegistration> JobRegistrationFromJson(const nlohmann::json& json);
Result<RankInfo> RankInfoFromJson(const nlohmann::json& json);
Result<ProfilingResult> ProfilingResultFromJson(const nlohmann::json& json);
Result<RankProfile> RankProfileFromJson(const nlohmann::json& json);
Result<PlannerSettings> PlannerSettingsFromJson(const nlohmann::json& json);
Result<ProfileUpload> ProfileUploadFromJson(const nlohmann::json& json);
Result<StragglerReport> StragglerReportFromJson(const nlohmann::json& json);
Result<PlanSelection> PlanSelectionFromJson(const nlohmann::json& json);
Result<PowerTarget> PowerTargetFromJson(const nlohmann::json& json);

// The other direction, for storage and responses.
nlohmann::json ToJson(const JobInfo& info);
nlohmann::json ToJson(const RankInfo& info);
nlohmann::json ToJson(const RankProfile& profile);
nlohmann::json ToJson(const PlannerSettings& settings);
nlohmann::json ToJson(const ProfilingResult& result);

// A query parameter that must be a non-negative integer ("rank", "offset", ...).
Result<int64_t> ParseNonNegativeInteger(std::string_view name, std::string_view text);

}  // namespace wattcut::server
