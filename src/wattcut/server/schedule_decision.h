// What a job's schedule round serves: a pure function of the job's state, no I/O, no
// lock (the registry calls it with the job's mutex held, and applies the decision).
//
// In order of precedence:
//  1. the frontier is ready: the selected plan (fastest by default) to every pipeline,
//     except that when stragglers are reported, every non-straggler pipeline gets the
//     plan at min(T', T*) (Frontier::IndexForIterationTime) where T' is the slowest
//     straggler's iteration time;
//  2. the job has no num_microbatches, or its instruction order cannot be built: an error;
//  3. the job has a profile (its frontier is computing or failed), or its profiling sweep
//     is done: every instruction at the rank's highest declared frequency (AllMax);
//  4. no profile: the server-run profiling sweep (profiling_sweep.h), started by the first
//     round that may start it, from the highest frequency every rank declared; AllMax
//     when the ranks share no frequency.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/plan/frontier.h"
#include "wattcut/server/frontier_state.h"
#include "wattcut/server/http_api.h"
#include "wattcut/server/profiling_sweep.h"

namespace wattcut::server {

// A reported straggler pipeline: its iteration time, or its slowdown factor over the
// selected plan's time.
struct Straggler {
  StragglerReport::Kind kind = StragglerReport::Kind::kIterationTime;
  double value = 0;
};
using Stragglers = std::map<int, Straggler>;  // by dp rank

// The point pipeline `dp_rank` runs: the non-straggler point when some pipelines straggle and
// it is not one of them, the selected point otherwise.
inline size_t PipelinePlanIndex(size_t base_index, size_t non_straggler_index, const std::set<int>& straggler_dp,
                                int dp_rank) {
  return !straggler_dp.empty() && !straggler_dp.count(dp_rank) ? non_straggler_index : base_index;
}

// The point `selection` names on `frontier` (an index past the end: the fastest).
size_t SelectedIndex(const Frontier& frontier, const PlanSelection& selection);
// T' of the slowest straggler when the selected point is `base_index`; 0 when none.
double StragglerIterationTime(const Frontier& frontier, size_t base_index, const Stragglers& stragglers);

// Everything the decision looks at.
struct ScheduleInputs {
  std::string job_id;
  FrontierState frontier_state = FrontierState::kNone;
  const Frontier* frontier = nullptr;  // set when frontier_state is kReady
  PlanSelection selection;
  Stragglers stragglers;
  int num_microbatches = 0;
  // Why the job's instruction order could not be built; nullopt when it was.
  std::optional<std::string> schedule_error;
  bool has_profile = false;
  ProfilingSweep::State sweep;
  // The frequencies each registered rank declared, and the sweep's lower bound.
  std::vector<std::vector<int>> declared_freqs_mhz;
  int profiling_min_freq_mhz = 0;
  // A real round may start the profiling sweep; a preview (GET /v1/jobs/{id}/schedule) may not.
  bool may_start_profiling = false;
};

struct ScheduleDecision {
  enum class Mode { kAllMax, kProfiling, kPlan, kError };
  Mode mode = Mode::kError;
  // kProfiling: the frequency every instruction runs at.
  int profiling_freq_mhz = 0;
  // kPlan: the selected point, and the point for non-straggler pipelines (== base_index
  // without stragglers), T' and the straggler pipelines.
  size_t base_index = 0;
  size_t non_straggler_index = 0;
  double straggler_time_s = 0;
  std::set<int> straggler_dp;
  // kProfiling: the frequencies of a sweep this decision starts (empty: none started).
  std::vector<int> start_sweep_freqs_mhz;
  // kError.
  Error error{"no schedule round has been decided yet", ErrorCode::kConflict};

  // The point pipeline `dp_rank` runs (kPlan).
  size_t PlanIndexFor(int dp_rank) const {
    return PipelinePlanIndex(base_index, non_straggler_index, straggler_dp, dp_rank);
  }
};

ScheduleDecision DecideSchedule(const ScheduleInputs& in);

// "all_max", "profiling", "plan", "error".
const char* ScheduleModeName(ScheduleDecision::Mode mode);

}  // namespace wattcut::server
