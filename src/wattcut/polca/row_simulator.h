// The trace-driven, discrete-event simulator of one row of inference servers under a
// row power policy (POLCA or a baseline).
//
// Requests come from an ArrivalSource: ArrivalExpansion (days of arrivals from one trace hour,
// --time-of-day cosine) or TraceTimeArrivals (a streamed trace on its own timeline, --time-of-day
// trace). They are
// routed to the least-loaded server of their priority class (fewest outstanding
// requests; ties go round-robin: LeastLoadedRouter), and are served by InferenceServer models. Row power
// is the exact sum of the servers' piecewise-constant power; it is averaged over each
// telemetry period, and that reading reaches the policy telemetry_delay_s later. The
// policy's commands land after the actuation or brake latency (ControlActuation).
// Everything is event-driven: the cost grows with requests, not with simulated time.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/polca/arrival_source.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/request_trace.h"
#include "wattcut/polca/row_power_policy.h"
#include "wattcut/polca/trace_timeline.h"
#include "wattcut/polca/training_job.h"
#include "wattcut/polca/training_server.h"

namespace wattcut::polca {

struct RowRunOptions {
  PolicyKind policy = PolicyKind::kPolca;
  int servers = 40;  // in the row, including added ones
  double duration_s = 86400;
  uint64_t seed = 1;
  bool keep_power_samples = true;
  // A row that trains (config.row.training_share > 0) needs its job (BuildTrainingJob of the
  // same config; shared by runs, read only) and how the policy acts on it.
  const TrainingJob* training_job = nullptr;
  TrainingControl training_control = TrainingControl::kLocks;
};

// The row's training servers over a run.
struct TrainingMetrics {
  int servers = 0;
  double iterations = 0;         // summed over the servers, fractions included
  int64_t plan_changes = 0;      // iterations that started on a different plan than the one before
  double limited_server_s = 0;   // server-seconds under a clock limit (lock, cap or brake)
  double targeted_server_s = 0;  // server-seconds with a power target in effect (power-target)
  double target_not_met_s = 0;   // seconds a target in effect had no plan low enough
};

struct PriorityMetrics {
  int servers = 0;
  int64_t completed = 0;
  double latency_p50_s = 0;
  double latency_p99_s = 0;
  int64_t generated_tokens = 0;
  double busy_server_s = 0;
  // Generated tokens of completed requests per second of the run: the class's
  // sustained throughput (requests still in flight at the end do not count).
  double tokens_per_s = 0;
};

// A policy decision that changed something, for plots.
struct PolicyAction {
  double t_s = 0;
  PolicyLevel level = PolicyLevel::kNormal;
  bool brake = false;
};

struct RowRunResult {
  PolicyKind policy = PolicyKind::kPolca;
  TrainingControl training_control = TrainingControl::kLocks;
  int servers = 0;  // inference and training
  double duration_s = 0;
  double budget_w = 0;
  int64_t arrivals = 0;
  int64_t unfinished = 0;  // still outstanding when the run ended
  int brake_events = 0;
  double brake_active_s = 0;
  std::array<double, 4> level_s{};  // time at each PolicyLevel
  double power_max = 0;             // readings, as fractions of the budget
  double power_p50 = 0;
  double power_p99 = 0;
  double power_mean = 0;
  double seconds_above_budget = 0;  // readings above 100 %
  double energy_kwh = 0;
  PriorityMetrics high;
  PriorityMetrics low;
  TrainingMetrics training;
  std::vector<float> power_samples;  // one per telemetry period, fraction of budget
  std::vector<PolicyAction> actions;
};

// The servers of a row of `servers` that train: round(servers x row.training_share).
int TrainingServersFor(const PolcaConfig& config, int servers);

// A run's name in tables and charts: the policy's, with "+power-target" or "+locks" when the
// row trains.
std::string RunLabel(const RowRunResult& run);

// The servers of a row of `servers` that serve requests: the others (at least one).
int InferenceServersFor(const PolcaConfig& config, int servers);

// The run with arrivals from `arrivals`, made for the row's InferenceServersFor(options.servers)
// serving servers (the arrival rate scales with them). Checks the config and CheckRunShape, not
// the arrivals' own bounds (the overloads below do). Fails when the source does.
Result<RowRunResult> SimulateRow(const PolcaConfig& config, ArrivalSource& arrivals, const RowRunOptions& options);
// --time-of-day cosine: `trace` expanded by ArrivalExpansion with the config's workload.
Result<RowRunResult> SimulateRow(const PolcaConfig& config, const RequestTrace& trace, const RowRunOptions& options);
// --time-of-day trace: the timeline's file streamed by TraceTimeArrivals, its busiest hour at
// workload.peak_requests_per_server_s per serving server; options.duration_s at most the trace's.
Result<RowRunResult> SimulateRow(const PolcaConfig& config, const TraceTimeline& timeline,
                                 const RowRunOptions& options);

// How a run compares with the unconstrained run of the same requests (policy none).
struct PriorityImpact {
  double p50_latency = 0;  // P50 latency / reference P50 - 1
  double p99_latency = 0;
  double throughput = 0;  // tokens_per_s / reference - 1 (negative: less served)
};
struct RunImpact {
  PriorityImpact high;
  PriorityImpact low;
  double training_throughput = 0;  // training iterations / reference's - 1; 0 without training
  // EnergyPerServedTokenJ / reference's - 1 (negative: each token cost less energy).
  double energy_per_token = 0;
  // The requests the run left unfinished beyond those the unconstrained run left, as a share of
  // the arrivals (negative: fewer); and the unconstrained run's own, as a share of the arrivals.
  int64_t arrivals = 0;
  int64_t extra_unfinished = 0;
  int64_t reference_unfinished = 0;
};

// The row's energy over the run per token generated for a completed request, both classes
// (J); 0 when none completed. A row that trains counts its training servers' energy too.
double EnergyPerServedTokenJ(const RowRunResult& run);
RunImpact CompareRuns(const RowRunResult& run, const RowRunResult& reference);

// POLCA.md's SLOs: high P50 < 1 %, P99 < 5 %; low P50 < 5 %, P99 < 50 %, on the latencies of
// the requests that completed, and two rules for the ones that did not (a request unfinished at
// the end is slower than every completed one):
//  * the run misses when it leaves more than kMaxExtraUnfinishedShare (1 %) of the arrivals
//    unfinished beyond those the unconstrained run leaves: its P99 over all of them is not met;
//  * no verdict when the unconstrained run itself leaves more than half of them unfinished: the
//    row is overloaded whatever the policy does, its P50 is no latency, and nothing compares.
inline constexpr double kMaxExtraUnfinishedShare = 0.01;
inline constexpr double kOverloadedUnfinishedShare = 0.5;
enum class SloVerdict { kMet, kMissed, kCannotJudge };
SloVerdict JudgeSlos(const RunImpact& impact);
// "met", "missed", or "cannot be judged: ..." with the reason, for the command line.
std::string SloVerdictText(const RunImpact& impact);
// "met", "missed", "cannot judge": for summary.json.
std::string SloVerdictName(SloVerdict verdict);
// JudgeSlos(impact) == SloVerdict::kMet.
bool MeetsSlos(const RunImpact& impact);

}  // namespace wattcut::polca
