#include "wattcut/cli/planner_arguments.h"

#include "wattcut/plan/planning_limits.h"
#include "wattcut/profile/gpu_model.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut::cli {

void AddPlannerOptions(CLI::App& command, PlannerArguments& args, int default_microbatches) {
  const std::string m = std::to_string(default_microbatches);
  command
      .add_option("--profile", args.profile_path,
                  "Profile CSV (stage,instruction,frequency,time,energy; or the Merak/Zeus per-rank layout). "
                  "Without it, a built-in GPU model's profile is used")
      ->check(CLI::ExistingFile);
  command.add_option("--gpu-model", args.gpu_model, "Built-in GPU model when no --profile is given: a100-sxm or a40")
      ->capture_default_str();
  command.add_option("--stages", args.stages,
                     "Number of pipeline stages (with --profile: checked against it; default: from the profile, or 8)");
  command.add_option("--microbatches", args.microbatches,
                     "Microbatches per iteration (required with --profile; default " + m + " with a GPU model)");
  command.add_option("--p2p-power", args.p2p_power_w,
                     "Blocking power of a waiting GPU, in W (required with --profile; default: the GPU model's)");
  command.add_option("--schedule", args.schedule, "Pipeline schedule: 1f1b or gpipe")->capture_default_str();
  command.add_option("--unit-time", args.unit_time_s, "Unit time in seconds")->capture_default_str();
  command
      .add_option("--noise-factor", args.noise_factor,
                  "Soft Pareto filter factor used when 3 or fewer options survive the strict filter")
      ->capture_default_str();
  command.add_option("--cost-model", args.cost_model, "exponential or convex-hull")->capture_default_str();
}

Result<PlanningInput> ResolvePlannerArguments(const PlannerArguments& args, int default_microbatches) {
  Result<const GpuModel*> model = FindGpuModel(args.gpu_model);
  if (!model.ok()) return model.error();
  PlanningInput input;
  // Before a profile of that many stages is read or modelled (0: from the profile, or 8).
  if (args.stages != 0) {
    if (Status s = CheckStages(args.stages); !s.ok()) return Error{"--stages: " + s.error().message};
  }
  if (!args.profile_path.empty()) {
    Result<AggregatedProfile> read = ReadProfileCsvWithWarnings(args.profile_path, args.stages);
    if (!read.ok()) return read.error();
    input.profile = std::move(read->profile);
    input.dropped = std::move(read->dropped);
    input.source = args.profile_path;
    if (args.microbatches <= 0) return Error{"--microbatches is required with --profile"};
    if (!args.p2p_power_w) return Error{"--p2p-power (blocking power in W) is required with --profile"};
  } else {
    input.profile = MakeModelProfile(**model, args.stages > 0 ? args.stages : 8);
    input.source = "built-in GPU model " + (*model)->name + " (" + (*model)->reference_workload + ")";
  }
  PlannerOptions& options = input.options;
  options.num_microbatches = args.microbatches > 0 ? args.microbatches : default_microbatches;
  options.p2p_power_w = args.p2p_power_w ? *args.p2p_power_w : (*model)->p2p_power_w;
  Result<PipelineScheduleKind> schedule = ParsePipelineSchedule(args.schedule);
  if (!schedule.ok()) return schedule.error();
  options.schedule = *schedule;
  Result<CostModelKind> cost_model = ParseCostModel(args.cost_model);
  if (!cost_model.ok()) return cost_model.error();
  options.cost_model = *cost_model;
  options.unit_time_s = args.unit_time_s;
  options.noise_factor = args.noise_factor;
  return input;
}

}  // namespace wattcut::cli
