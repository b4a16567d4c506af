// One change to a job, as Job::Commit takes it (the shape of LevelDB's VersionEdit): the new
// values of the parts it changes, nothing else. Commit checks the edit against the job, stores
// it in one JobStore transaction, then applies it; an edit is never applied in part.
//
// The parts that make one transaction together:
//   register_rank                       JobStore::PutRank
//   rank_profile                        JobStore::PutRankProfile
//   rank_profile + state parts          JobStore::PutRankProfileAndState (a sweep's measurement)
//   result                              JobStore::PutResult
//   planner                             JobStore::PutPlanner
//   profile (+ planner)                 JobStore::PutProfile
//   frontier_result                     JobStore::PutFrontier, or PutFrontierSummary for a failure
//   state parts only (or none)          JobStore::PutState (the state document as it would be)
// Any other mix is refused by the check (kInvalidArgument), as a programming error.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "wattcut/plan/frontier.h"
#include "wattcut/profile/profile.h"
#include "wattcut/profile/rank_aggregation.h"
#include "wattcut/server/deadline_following.h"
#include "wattcut/server/deployment.h"
#include "wattcut/server/http_api.h"
#include "wattcut/server/measured_gpu_energy.h"
#include "wattcut/server/profiling_sweep.h"
#include "wattcut/server/schedule_decision.h"

namespace wattcut::server {

// A profile to install: the profile, the frequencies its aggregation left out, the text stored
// for it (an uploaded CSV as uploaded) and where it came from ("csv", "rank_profiles",
// "server_profiling").
struct ProfileInstall {
  std::shared_ptr<const Profile> profile;
  std::vector<DroppedFrequency> dropped;
  std::string stored_csv;
  std::string source;
};

// A frontier computation's end: its frontier (null: it failed, with `error`), the stored form,
// the summary listed with the job (empty with no frontier: nothing is stored, the job's frontier
// fails in memory only, as for a planner that returned no point), and how long it took. Built
// before the job's lock is taken: the stored form of a large frontier is tens of MB.
struct FrontierResult {
  std::shared_ptr<const Frontier> frontier;
  std::string stored_text;
  std::string summary_json;
  std::string error;
  double compute_seconds = 0;
};

struct JobEdit {
  // Rows.
  std::optional<RankInfo> register_rank;
  std::optional<RankProfile> rank_profile;
  std::optional<ProfilingResult> result;
  std::optional<PlannerSettings> planner;
  std::optional<ProfileInstall> profile;
  std::optional<FrontierResult> frontier_result;  // its generation is the job's current one

  // Parts of the state document (job_state_codec.h's JobState).
  std::optional<PlanSelection> selection;
  std::optional<Stragglers> stragglers;
  std::optional<std::optional<PowerTarget>> power_target;    // nullopt inside: cleared
  std::optional<std::optional<DeadlineFollowing>> deadline;  // nullopt inside: cleared
  std::optional<ProfilingSweep> sweep;
  std::optional<int> frontier_attempts;
  std::optional<Deployment> deployment;
  std::optional<MeasuredGpuEnergy> measured_gpu_energy;  // every node's report, as it will be
  bool complete_round = false;                           // the round every rank joined ends (its waiters are answered)

  bool has_state_parts() const;
};

// The parts of the state document of `edit` (JobEdit or const JobEdit), in one list:
// has_state_parts(), Job::StateAfter, Job::Apply and the test that stores and restores each part
// (job_commit_test.cc) all take them from here. The binding names every field of JobEdit, so a
// field added to JobEdit does not compile until it is sorted here, into the rows or the parts.
template <class Edit>
auto StateParts(Edit& edit) {
  [[maybe_unused]] auto& [register_rank, rank_profile, result, planner, profile, frontier_result,  // rows
                          selection, stragglers, power_target, deadline, sweep, frontier_attempts, deployment,
                          measured_gpu_energy, complete_round] = edit;
  return std::tie(selection, stragglers, power_target, deadline, sweep, frontier_attempts, deployment,
                  measured_gpu_energy, complete_round);
}

inline bool JobEdit::has_state_parts() const {
  const auto is_set = [](const auto& part) { return static_cast<bool>(part); };  // an optional, or complete_round
  return std::apply([&](const auto&... part) { return (is_set(part) || ...); }, StateParts(*this));
}

}  // namespace wattcut::server
