// Sizes a row: simulates it with more and more added servers under each policy, each
// against the unconstrained run (policy none) of the same requests, and reports how
// many servers each policy holds with zero brake events and the SLOs met.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/request_trace.h"
#include "wattcut/polca/row_power_policy.h"
#include "wattcut/polca/row_simulator.h"

namespace wattcut::polca {

struct SweepOptions {
  std::vector<double> added_fractions;  // 0.3 = 30 % more servers than the baseline
  std::vector<PolicyKind> policies;
  // How the policies act on the row's training servers (row.training_share > 0): each policy is
  // run with each; empty: locks. Needs `training_job` (BuildTrainingJob of the same config).
  std::vector<TrainingControl> training_controls;
  const TrainingJob* training_job = nullptr;
  double duration_s = 7 * 86400;
  uint64_t seed = 1;
  int jobs = 1;  // runs simulated in parallel (at most kMaxSweepJobs); results do not depend on it
};

struct SweepPoint {
  double added_fraction = 0;
  int servers = 0;
  RowRunResult run;  // without power samples
  RunImpact impact;
  bool meets_slos = false;
  bool holds = false;  // zero brake events, no reading above the budget, and SLOs met
};

struct SweepResult {
  int baseline_servers = 0;
  std::vector<RowRunResult> references;  // one per added fraction, policy none
  std::vector<double> added_fractions;   // sorted, without duplicates
  std::vector<SweepPoint> points;        // added-major, then policy, then training control, as given
  // Per policy and training control (policy-major, as `points`): the largest added fraction
  // such that it and every smaller one in the sweep hold; -1 if even the first does not.
  std::vector<double> max_added_held;
  double simulated_s = 0;  // total simulated row-seconds over all runs
};

// Number of servers for `added_fraction` more than `baseline` (rounded to nearest).
// Expects baseline and added_fraction within row_limits.h (kMaxServersPerRow, kMaxAddedFraction).
int ServersFor(int baseline, double added_fraction);

// `progress` (may be empty) is called after each run with a one-line description.
// --time-of-day cosine: every run expands `trace` (ArrivalExpansion).
Result<SweepResult> RunSweep(const PolcaConfig& config, const RequestTrace& trace, const SweepOptions& options,
                             const std::function<void(const std::string&)>& progress = {});
// --time-of-day trace: every run streams the timeline's file on its own (TraceTimeArrivals), so
// parallel runs each hold one block, never the trace.
Result<SweepResult> RunSweep(const PolcaConfig& config, const TraceTimeline& timeline, const SweepOptions& options,
                             const std::function<void(const std::string&)>& progress = {});

}  // namespace wattcut::polca
