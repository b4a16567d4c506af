// The POLCA report's pictures, as standalone SVG text (run_report.h writes them to files):
//   * row power over time of one run, with the unconstrained run behind it, the time
//     above T1 and T2 shaded, the brake engagements marked and the thresholds drawn;
//   * the CDF of row power of the run and of the unconstrained run, with the thresholds;
//   * for a sweep: brake events per policy against the servers added, and the P50 and
//     P99 latency impact per policy of one priority class against its SLOs.
// Power is in percent of the row budget on every chart.
#pragma once

#include <string>
#include <vector>

#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/row_simulator.h"
#include "wattcut/polca/row_sweep.h"

namespace wattcut::polca {

// `reference` is the unconstrained run; its line is left out when it has no samples or
// `run` is itself unconstrained (policy none).
std::string RowPowerChartSvg(const PolcaConfig& config, const RowRunResult& run, const RowRunResult& reference);
std::string PowerCdfChartSvg(const PolcaConfig& config, const RowRunResult& run, const RowRunResult& reference);

std::string SweepBrakesChartSvg(const PolcaConfig& config, const SweepResult& sweep);

enum class PriorityClass { kHigh, kLow };
// SLO lines: P50 1 % and P99 5 % for high priority, P50 5 % and P99 50 % for low
// priority (the SLOs of MeetsSlos).
std::string SweepLatencyChartSvg(const SweepResult& sweep, PriorityClass priority);
// Training iterations against the unmanaged run (%) per policy and training control, for a row
// that trains.
std::string SweepTrainingChartSvg(const PolcaConfig& config, const SweepResult& sweep);
// Energy per served token against the unconstrained run of the same requests, per policy.
std::string SweepEnergyChartSvg(const SweepResult& sweep);

// The names of the sweep's policies in the order of their first point: the order of the
// sweep charts' legends and of summary.json's max_added_fraction_held.
std::vector<std::string> SweepPolicyNames(const SweepResult& sweep);

}  // namespace wattcut::polca
