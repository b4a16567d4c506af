// The options every planning subcommand shares (`wattcut frontier`, `wattcut emulate`):
// where the profile comes from and how the planner runs, parsed into a Profile and
// PlannerOptions with one set of messages.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/plan/planner.h"
#include "wattcut/plan/planner_defaults.h"
#include "wattcut/profile/profile.h"
#include "wattcut/profile/rank_aggregation.h"

namespace wattcut::cli {

struct PlannerArguments {
  std::string profile_path;
  std::string gpu_model = "a100-sxm";
  int stages = 0;
  int microbatches = 0;
  std::optional<double> p2p_power_w;
  std::string schedule = "1f1b";
  int virtual_stages = 1;
  double unit_time_s = kDefaultUnitTimeS;
  double noise_factor = kDefaultNoiseFactor;
  std::string cost_model{CostModelName(kDefaultCostModel)};
};

// Adds --profile, --gpu-model, --stages, --microbatches, --p2p-power, --schedule,
// --virtual-stages, --unit-time, --noise-factor and --cost-model to `command`. `default_microbatches` is
// used with a built-in GPU model (with --profile, --microbatches is required).
void AddPlannerOptions(CLI::App& command, PlannerArguments& args, int default_microbatches);

struct PlanningInput {
  Profile profile;
  PlannerOptions options;
  std::string source;  // what the profile is, for reports
  // Frequencies of a per-rank profile left out because some rank of their stage lacks them
  // (each command prints them as warnings).
  std::vector<DroppedFrequency> dropped;
  // Assumptions made about the profile (a split backward, stages cut into chunks), which
  // each command prints as warnings.
  std::vector<std::string> notes;
};

Result<PlanningInput> ResolvePlannerArguments(const PlannerArguments& args, int default_microbatches);

}  // namespace wattcut::cli
