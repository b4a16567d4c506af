// What a user sets on a job, as the domain knows it: the planner settings its frontier is computed
// with, which point of the frontier it runs, a power target and a deadline schedule. Each with its
// JSON form (the request's and the stored one), read with every error naming its field.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "wattcut/base/result.h"
#include "wattcut/plan/planner.h"
#include "wattcut/plan/planner_defaults.h"

namespace wattcut::server {

// wattcut's planner settings for a job (PlannerOptions as JSON). num_microbatches 0
// means "not set yet".
struct PlannerSettings {
  int num_microbatches = 0;
  PipelineScheduleKind schedule = PipelineScheduleKind::k1F1B;
  // Model chunks per rank (the interleaved schedule): the job's profile stays one stage per
  // pp rank, each chunk planned with its rank's rows (ComputeFrontierFromDeviceProfile).
  int virtual_stages = 1;
  double unit_time_s = kDefaultUnitTimeS;
  double noise_factor = kDefaultNoiseFactor;
  CostModelKind cost_model = kDefaultCostModel;
  double p2p_power_w = 0;
  // Server-run profiling: frequencies below this are not swept; 0 sweeps them all.
  int profiling_min_freq_mhz = 0;

  PlannerOptions ToPlannerOptions() const;
  bool operator==(const PlannerSettings&) const = default;
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
  // As stored (from_step and replans included).
  static Result<DeadlineScheduleSpec> FromJson(const nlohmann::json& json);
  // As a PUT gives it: the fields the server sets (from_step, replans) are refused, and so is
  // "pipelines": 0 (leave it out for the job's dp_degree).
  static Result<DeadlineScheduleSpec> FromRequestJson(const nlohmann::json& json);
  bool operator==(const DeadlineScheduleSpec&) const = default;
};
inline constexpr size_t kDeadlineSeriesMaxBytes = size_t{4} << 20;

Result<PlannerSettings> PlannerSettingsFromJson(const nlohmann::json& json);
// The same, a field left out keeping `base`'s value.
Result<PlannerSettings> PlannerSettingsFromJson(const nlohmann::json& json, const PlannerSettings& base);

// PUT /v1/jobs/{id}/planner body: the fields to change. A field left out keeps the job's value
// (before, it was reset to its default: a body without p2p_power_w set a registered 83.64 W to 0).
struct PlannerPatch {
  nlohmann::json fields;  // an object, every field checked as PlannerSettingsFromJson checks it
};
Result<PlannerPatch> PlannerPatchFromJson(const nlohmann::json& json);
Result<PlanSelection> PlanSelectionFromJson(const nlohmann::json& json);
Result<PowerTarget> PowerTargetFromJson(const nlohmann::json& json);
// num_microbatches 0 ("not set yet") is written as null, which PlannerSettingsFromJson reads back.
nlohmann::json ToJson(const PlannerSettings& settings);

}  // namespace wattcut::server
