// Job-level energy of data-parallel pipelines when one of them is a straggler (the
// artifact's emulation, PERSEUS.md §7).
//
// A method m gives each pipeline a plan. Its fastest plan takes T_m seconds and E_m
// joules (blocking included). With N pipelines and straggler slowdown k:
//   * the straggler runs m's fastest plan and takes k * E_m (it is k times slower);
//   * the job's iteration lasts k * T_m;
//   * each of the N - 1 others runs the plan m chooses for it, (t, e), and then blocks at
//     blocking power until the iteration ends: e + S * P_b * (k * T_m - t).
// Job energy = k * E_m + (N - 1) * (e + S * P_b * (k * T_m - t)).
// Perseus chooses the frontier plan at min(k * T_min, T*); Perseus-intrinsic, AllMax and
// EnvPipe keep their one plan; ZeusGlobal picks its uniform frequency for the deadline.
// Savings are against AllMax at the same k. Tensor parallelism (TP) and the artifact's
// time scale K scale times by K and all energies by K * TP: savings in % depend on
// neither.
#pragma once

#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/emulate/envpipe.h"
#include "wattcut/plan/frontier.h"
#include "wattcut/profile/profile.h"

namespace wattcut {

struct EmulationSetup {
  int num_pipelines = 1;
  int tensor_parallel = 1;  // multiplies computation energy and blocking power
  double time_scale = 1;    // K: multiplies times and energies
  double p2p_power_w = 0;   // unscaled blocking power of one GPU
  std::vector<double> slowdowns;
};

struct MethodResult {
  std::string method;  // "allmax", "perseus", "perseus-intrinsic", "envpipe", "zeus-global"
  double slowdown = 1;
  double iteration_time_s = 0;  // the job's, scaled
  double energy_j = 0;          // the whole job's, scaled
  double saving_percent = 0;    // vs AllMax at the same slowdown
  double plan_time_s = 0;       // the non-straggler plan's own time, scaled
};

struct EmulationResult {
  double t_min_s = 0, t_star_s = 0;                // scaled
  double energy_t_min_j = 0, energy_t_star_j = 0;  // one pipeline, scaled
  double all_max_energy_j = 0;                     // one pipeline at T_min, scaled
  double intrinsic_saving_percent = 0;             // Perseus's fastest plan vs AllMax, one pipeline
  double envpipe_time_s = 0, envpipe_energy_j = 0;
  double envpipe_intrinsic_saving_percent = 0;
  std::vector<MethodResult> results;  // per slowdown, every method
};

// Fails on an empty slowdown list, a slowdown < 1, or num_pipelines < 1.
Result<EmulationResult> EmulateStragglers(const Profile& profile, const Frontier& frontier, const EnvPipePlan& envpipe,
                                          const EmulationSetup& setup);

// Parses "1.2" or "start:stop:step" (inclusive of stop, within rounding).
Result<std::vector<double>> ParseSlowdowns(const std::string& text);

}  // namespace wattcut
