// Files the planner writes, in formats users already have.
//
//   frontier.csv  one row per point, slowest first:
//                 plan,time,energy,duration_units,effective_energy,avg_power_w,
//                 avg_power_per_gpu_w,peak_1s_power_w
//                 plan: the point's index (`wattcut plan show DIR --point N`; with
//                 --plans json, plans/<plan padded to 5 digits>.json);
//                 time: iteration time in s (critical path, quantised); energy: J for the
//                 whole pipeline, blocking energy included:
//                 effective_energy + stages * time * p2p_power.
//                 avg_power_w: energy / time; avg_power_per_gpu_w: that / stages;
//                 peak_1s_power_w: the pipeline's peak 1-s power (plan/frontier_power.h),
//                 empty when not computed. New columns go at the end.
//   plans/NNNNN.json  one frequency plan (format "wattcut.frequency_plan/v1"):
//                 {"format": ..., "point": N, "time_s": T, "energy_j": E, "unit_time_s": u,
//                  "stages": [[["forward", 0, 1410, 50], ...], ...]}
//                 per stage (device), the computations in execution order as
//                 [instruction, microbatch, freq_mhz, planned duration in unit times],
//                 with a fifth element, the device's model chunk, when the schedule
//                 runs several chunks per device (interleaved). instruction: forward,
//                 backward, backward_input or backward_weight.
//   a DAG's plan (format "wattcut.dag_plan/v1", `wattcut plan show` on a DAG's frontier):
//                 {"format": ..., "point": N, "time_s": T, "energy_j": E, "unit_time_s": u,
//                  "knobs": {"OPERATION": knob, ...}, "duration_units": {"OPERATION": d, ...}}
//                 every operation's knob and planned duration, by its name in the DAG file.
//   Zeus export:  a Python literal that Zeus's pipeline-frequency-optimizer PointSolution
//                 reads: one list per stage of ("forward"|"backward", MHz) tuples in
//                 execution order.
#pragma once

#include <string>
#include <string_view>

#include "wattcut/base/result.h"
#include "wattcut/plan/dag_frontier.h"
#include "wattcut/plan/frontier.h"

namespace wattcut {

inline constexpr std::string_view kDagPlanFormat = "wattcut.dag_plan/v1";

// avg_power_per_gpu_w is empty for a frontier without devices (a DAG that names none).
std::string FrontierCsv(const DurationFrontier& frontier);
std::string PlanJson(const Frontier& frontier, size_t index);
std::string DagPlanJson(const DagFrontier& frontier, size_t index);
std::string ZeusPlanLiteral(const FrequencyPlan& plan);
// "00042" for 42.
std::string PlanFileStem(size_t index);

// A frequency plan read back from plans/NNNNN.json.
struct StoredPlan {
  size_t point = 0;
  double time_s = 0;
  double energy_j = 0;
  double unit_time_s = 0;
  FrequencyPlan plan;
};
Result<StoredPlan> ParsePlanJson(const std::string& text, const std::string& source_name);

}  // namespace wattcut
