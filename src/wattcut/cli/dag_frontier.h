// A wattcut.dag/v1 file's frontier and its outputs (DIR/frontier.wattcut, DIR/frontier.csv,
// DIR/plans.jsonl): what `wattcut dag frontier` and `wattcut frontier --dag` both run
// (cli/dag_command.cc).
#pragma once

#include <optional>
#include <string>

#include "wattcut/plan/planner_defaults.h"

namespace wattcut::cli {

struct DagFrontierArgs {
  std::string dag_path;
  std::string out_dir;
  std::optional<double> unit_time_s;  // overrides the file's unit_time_s
  double noise_factor = kDefaultNoiseFactor;
  std::string cost_model{CostModelName(kDefaultCostModel)};
  bool overwrite = false;
};

// Reads, plans and writes; reports as `command` ("dag frontier", "frontier"). The exit code.
int RunDagFrontier(const std::string& command, const DagFrontierArgs& args);

}  // namespace wattcut::cli
