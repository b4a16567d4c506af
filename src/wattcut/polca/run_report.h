// Writes what a user reads after `wattcut polca simulate` and `wattcut polca sweep`:
// summary.json, CSV tables and SVG pictures (drawn by row_charts.h), into an output
// folder (created if missing). File formats are documented in docs/polca.md.
#pragma once

#include <string>

#include "wattcut/base/result.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/request_trace.h"
#include "wattcut/polca/row_simulator.h"
#include "wattcut/polca/row_sweep.h"
#include "wattcut/polca/time_of_day.h"
#include "wattcut/polca/trace_timeline.h"

namespace wattcut::polca {

struct RunContext {
  std::string command;  // the command line, for the record
  const PolcaConfig* config = nullptr;
  const RequestTrace* trace = nullptr;  // --time-of-day cosine
  uint64_t seed = 1;
  double wall_s = 0;                          // time the simulations took
  const TrainingJob* training_job = nullptr;  // when the row trains
  // --time-of-day trace: the streamed trace's timeline (instead of `trace`).
  TimeOfDay time_of_day = TimeOfDay::kCosine;
  const TraceTimeline* timeline = nullptr;
};

// summary.json, run.csv (one row of metrics), row_power.csv (per-minute mean and max
// of the readings, with the unconstrained reference), config.conf (the config used),
// row_power.svg (power over time with thresholds and policy actions) and
// power_cdf.svg (CDF of row power against the unconstrained run).
Status WriteRunReport(const std::string& dir, const RunContext& context, const RowRunResult& run,
                      const RowRunResult& reference);

// summary.json, sweep.csv (one row per policy and added fraction), sweep.md (the
// same as a Markdown table), config.conf, sweep_brakes.svg, sweep_latency_high.svg and
// sweep_latency_low.svg (P50 and P99 latency impact per policy against the SLOs) and
// sweep_energy.svg (energy per served token per policy against the unconstrained run).
Status WriteSweepReport(const std::string& dir, const RunContext& context, const SweepResult& sweep);

// The Markdown table of a sweep (also in sweep.md).
std::string SweepMarkdown(const SweepResult& sweep);

}  // namespace wattcut::polca
