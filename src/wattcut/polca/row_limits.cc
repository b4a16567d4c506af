#include "wattcut/polca/row_limits.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "wattcut/base/printable_text.h"
#include "wattcut/polca/arrival_expansion.h"
#include "wattcut/polca/row_simulator.h"
#include "wattcut/polca/trace_time_arrivals.h"
#include "wattcut/polca/trace_timeline.h"

namespace wattcut::polca {
namespace {

std::string Number(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

}  // namespace

Status CheckRowSize(int servers, const char* what) {
  if (servers < 1 || servers > kMaxServersPerRow) {
    return Error{std::string(what) + " must be between 1 and " + std::to_string(kMaxServersPerRow) +
                 " servers (10,000 servers draw about 65 MW, a whole datacenter), got " + std::to_string(servers)};
  }
  return Status::Ok();
}

Status CheckDuration(double duration_s) {
  if (!(duration_s >= kMinDurationS && duration_s <= kMaxDurationS)) {
    return Error{
        "the duration must be between 1 s and 90 d (longer runs only repeat the weekly arrival pattern), "
        "got " +
        Number(duration_s) + " s"};
  }
  return Status::Ok();
}

double ReplayedRequestsPerBlock(const PolcaConfig& config, const RequestTrace& trace, int servers) {
  const double block_s = ArrivalExpansion::BlockSecondsFor(trace);
  const auto requests = static_cast<double>(trace.requests().size());
  // The envelope is at most 1 on weekdays and weekend_factor on weekends.
  const double peak_rate_per_s =
      servers * config.workload.peak_requests_per_server_s * std::max(1.0, config.workload.weekend_factor);
  const double copies = std::max(1.0, std::ceil(peak_rate_per_s * block_s / std::max(1.0, requests)));
  return copies * requests;
}

double ReplayedRequestsPerRun(const PolcaConfig& config, const RequestTrace& trace, int servers, double duration_s) {
  const double blocks = std::ceil(duration_s / ArrivalExpansion::BlockSecondsFor(trace));
  return blocks * ReplayedRequestsPerBlock(config, trace, servers);
}

Status CheckRunShape(const PolcaConfig& config, const RowRunOptions& options) {
  if (Status s = CheckRowSize(options.servers, "the row"); !s.ok()) return s;
  if (Status s = CheckDuration(options.duration_s); !s.ok()) return s;
  const double period_s = config.control.telemetry_period_s;
  if (!(period_s >= kMinTelemetryPeriodS && period_s <= kMaxTelemetryPeriodS)) {
    return Error{"control.telemetry_period_s must be between 0.01 s and 3600 s, got " + Number(period_s)};
  }
  const double readings = options.duration_s / period_s;
  if (readings > static_cast<double>(kMaxPowerReadingsPerRun)) {
    return Error{"a run of " + Number(options.duration_s) + " s with a telemetry reading every " + Number(period_s) +
                 " s keeps " + Number(readings) + " row power readings, more than the " +
                 std::to_string(kMaxPowerReadingsPerRun) +
                 " one run may hold (200 MB); shorten --duration or lengthen control.telemetry_period_s"};
  }
  // Training servers: one event per timeline step (at most one per training.timeline_step_s).
  const int training_servers = TrainingServersFor(config, options.servers);
  const double steps = training_servers * options.duration_s / config.training.timeline_step_s;
  if (steps > static_cast<double>(kMaxTrainingStepsPerRun)) {
    return Error{"a run of " + Number(training_servers) + " training servers for " + Number(options.duration_s) +
                 " s at a timeline step of " + Number(config.training.timeline_step_s) + " s simulates " +
                 Number(steps) + " steps, more than the " + std::to_string(kMaxTrainingStepsPerRun) +
                 " one run may (minutes of work); shorten --duration or lengthen training.timeline_step_s"};
  }
  return Status::Ok();
}

Status CheckRowRun(const PolcaConfig& config, const RequestTrace& trace, const RowRunOptions& options) {
  if (Status s = CheckRunShape(config, options); !s.ok()) return s;
  const double per_block = ReplayedRequestsPerBlock(config, trace, options.servers);
  if (per_block > static_cast<double>(kMaxReplayedRequestsPerBlock)) {
    return Error{
        trace.name() + ": one replay block (" + Number(ArrivalExpansion::BlockSecondsFor(trace)) +
        " s, the trace's span) of " + std::to_string(options.servers) + " servers at " +
        Number(config.workload.peak_requests_per_server_s) + " requests/s each replays up to " + Number(per_block) +
        " requests, more than the " + std::to_string(kMaxReplayedRequestsPerBlock) +
        " one block may replay; use a shorter trace, fewer servers or a lower workload.peak_requests_per_server_s"};
  }
  const double per_run = ReplayedRequestsPerRun(config, trace, options.servers, options.duration_s);
  if (per_run > static_cast<double>(kMaxReplayedRequestsPerRun)) {
    return Error{"a run of " + std::to_string(options.servers) + " servers for " + Number(options.duration_s) +
                 " s at " + Number(config.workload.peak_requests_per_server_s) +
                 " requests/s per server replays up to " + Number(per_run) + " requests, more than the " +
                 std::to_string(kMaxReplayedRequestsPerRun) +
                 " one run may simulate (1.6 GB of latencies); shorten --duration or use fewer servers"};
  }
  return Status::Ok();
}

Status CheckRowRun(const PolcaConfig& config, const TraceTimeline& timeline, const RowRunOptions& options) {
  if (Status s = CheckRunShape(config, options); !s.ok()) return s;
  if (options.duration_s > timeline.duration_s()) {
    return Error{"--duration: " + Number(options.duration_s) + " s (" + Number(options.duration_s / 86400) +
                 " d) is longer than the trace " + timeline.path + " (" + Number(timeline.duration_s()) + " s, " +
                 Number(timeline.duration_s() / 86400) + " d from '" + PrintableText(timeline.start_timestamp) +
                 "'); with --time-of-day trace a run follows the trace's own timeline and cannot outlast it"};
  }
  const int inference_servers = options.servers - TrainingServersFor(config, options.servers);
  const double rate = std::max(0, inference_servers) * config.workload.peak_requests_per_server_s;
  // Each request becomes at most floor(scale) + 1 arrivals.
  const double most_copies = std::floor(TraceTimeArrivals::ScaleFor(timeline, rate)) + 1;
  const double per_hour = most_copies * static_cast<double>(timeline.busiest_hour_requests());
  if (per_hour > static_cast<double>(kMaxReplayedRequestsPerBlock)) {
    return Error{timeline.path + ": the trace's busiest hour scaled to " + std::to_string(inference_servers) +
                 " serving servers at " + Number(config.workload.peak_requests_per_server_s) +
                 " requests/s each is up to " + Number(per_hour) + " requests, more than the " +
                 std::to_string(kMaxReplayedRequestsPerBlock) +
                 " held at once; use fewer servers or a lower workload.peak_requests_per_server_s"};
  }
  const double per_run = most_copies * static_cast<double>(timeline.RequestsBefore(options.duration_s));
  if (per_run > static_cast<double>(kMaxReplayedRequestsPerRun)) {
    return Error{"a run of " + std::to_string(options.servers) + " servers for " + Number(options.duration_s) +
                 " s on the trace's timeline at " + Number(config.workload.peak_requests_per_server_s) +
                 " requests/s per server at its busiest hour replays up to " + Number(per_run) +
                 " requests, more than the " + std::to_string(kMaxReplayedRequestsPerRun) +
                 " one run may simulate (1.6 GB of latencies); shorten --duration or use fewer servers"};
  }
  return Status::Ok();
}

Status CheckSweepSize(size_t added_values, size_t policies, int jobs) {
  const double runs = static_cast<double>(added_values) * (static_cast<double>(policies) + 1);
  if (runs > static_cast<double>(kMaxSweepRuns)) {
    return Error{"a sweep of " + std::to_string(added_values) + " added values x " + std::to_string(policies) +
                 " policies is " + Number(runs) + " runs (with the unconstrained references), more than " +
                 std::to_string(kMaxSweepRuns) + "; use a coarser --added step or fewer policies"};
  }
  if (jobs < 0 || jobs > kMaxSweepJobs) {
    return Error{"--jobs must be between 1 and " + std::to_string(kMaxSweepJobs) + " (0: one per CPU), got " +
                 std::to_string(jobs)};
  }
  return Status::Ok();
}

}  // namespace wattcut::polca
