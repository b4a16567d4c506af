// A job's stored form and back: the rows JobStore keeps (JSON texts) to the values the
// registry works with, and the job-state document to text.
//
// The state document (jobs.state_json) carries "schema_version": 1. A document without
// it was written before versions were recorded and reads as version 1; a newer version is
// refused with a message (the job is then quarantined, its rows left as they are), so an
// older server never misreads a newer one's state.
//
// Decoding never throws: malformed JSON or a field of the wrong type is an error value
// (ErrorCode::kCorruption) naming the row and the field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/server/http_api.h"
#include "wattcut/server/job_store.h"
#include "wattcut/server/measured_gpu_energy.h"
#include "wattcut/server/profiling_sweep.h"
#include "wattcut/server/schedule_decision.h"

namespace wattcut::server {

inline constexpr int kJobStateSchemaVersion = 1;

// The small state document: what changes round by round.
struct JobState {
  int64_t completed_rounds = 0;
  PlanSelection selection;
  Stragglers stragglers;
  // Frontier computations started and not finished since the last one that finished.
  int frontier_attempts = 0;
  ProfilingSweep::State sweep;
  // The deployment the ranks were last given (deployment.h): its version and apply step.
  uint64_t deployment_version = 0;
  int64_t deployment_apply_from_step = 0;
  // The fastest rank's steps a second when it was chosen: after a restart, until a rate is
  // measured again.
  double deployment_steps_per_s = 0;
  // PUT /v1/jobs/{id}/power_target: kept with the selection and the stragglers it combines
  // with, and written in the same document as the deployment version it caused. Absent in a
  // document written before issue 17 (no target).
  std::optional<PowerTarget> power_target;
  // PUT /v1/jobs/{id}/deadline_schedule: the spec (its schedule is computed again from it on
  // load). Absent in a document written before issue 32.
  std::optional<DeadlineScheduleSpec> deadline_schedule;
  // PUT /v1/jobs/{id}/measured-energy/{node}: what each node measured (empty: none; not
  // written then). Absent in a document written before it.
  MeasuredGpuEnergy measured_gpu_energy;
};

std::string EncodeJobState(const JobState& state);
Result<JobState> DecodeJobState(std::string_view text);

// Every row of a stored job, decoded and checked against each other (ranks within
// world_size and labelled as their row). The profile and the frontier stay as stored.
struct DecodedJob {
  JobInfo info;  // job_id included
  PlannerSettings planner;
  std::vector<std::optional<RankInfo>> ranks;             // world_size entries
  std::vector<std::optional<RankProfile>> rank_profiles;  // world_size entries
  std::vector<uint8_t> has_result;                        // world_size entries
  JobState state;
};

Result<DecodedJob> DecodeStoredJob(const StoredJob& stored);

}  // namespace wattcut::server
