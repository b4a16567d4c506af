// The emulation's pictures, as standalone SVG text:
//   * the frontier (iteration time vs energy) with AllMax, EnvPipe, T_min and T* marked;
//   * energy saving vs straggler slowdown T'/T per method (the paper's Figure 8);
//   * a pipeline timeline of a plan: one lane per stage, one box per computation
//     coloured by its frequency and labelled in the schedule notation (F3, B0.1, W2:
//     dag/schedule_notation.h); the gaps between boxes are blocking time;
//   * the power sweep: power reduction vs slowdown, uniform clock locking against Perseus's
//     plans, of the peak 1-s and the average power (power_sweep.h).
#pragma once

#include <string>
#include <vector>

#include "wattcut/emulate/power_sweep.h"
#include "wattcut/emulate/straggler_emulation.h"
#include "wattcut/plan/frontier.h"

namespace wattcut {

// time_scale and energy_scale as in EmulationSetup (K and K * TP).
std::string FrontierChartSvg(const Frontier& frontier, const EmulationResult& result, double time_scale,
                             double energy_scale, const std::string& title);
std::string SavingsChartSvg(const EmulationResult& result, const std::string& title);
// Timeline of frontier point `index`, times in ms (scaled).
std::string PlanTimelineSvg(const Frontier& frontier, size_t index, double time_scale, const std::string& title);
// Four curves: peak and average power reduction (%) of uniform-lock and perseus vs slowdown,
// the x axis up to a little past Perseus's slowest plan (the slower clocks are in the JSON).
// A reference point (slowdown, reduction as a fraction) is marked when `reference_label` is
// not empty (POLCA's 22 % peak for 10 % slowdown).
std::string PowerSweepChartSvg(const PowerSweep& sweep, const std::string& title, double reference_slowdown = 0,
                               double reference_reduction = 0, const std::string& reference_label = "");

}  // namespace wattcut
