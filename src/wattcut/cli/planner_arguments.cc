#include "wattcut/cli/planner_arguments.h"

#include "wattcut/plan/planning_limits.h"
#include "wattcut/profile/chunk_split.h"
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
  command
      .add_option("--schedule", args.schedule,
                  "Pipeline schedule: 1f1b, gpipe, interleaved (Megatron-LM's, with --virtual-stages) or zb-h1 "
                  "(zero bubble, backward split into backward_input and backward_weight)")
      ->capture_default_str();
  command.add_option("--virtual-stages", args.virtual_stages,
                     "Model chunks per device for --schedule interleaved (2 or more): --stages is then the number of "
                     "devices and the profile has stages x virtual-stages stages, the chunks in model order");
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
  Result<PipelineScheduleKind> schedule = ParsePipelineSchedule(args.schedule);
  if (!schedule.ok()) return schedule.error();
  const int chunks = args.virtual_stages;
  if (*schedule == PipelineScheduleKind::kInterleaved && chunks < 2) {
    return Error{"--schedule interleaved needs --virtual-stages V, the model chunks per device (2 or more)"};
  }
  if (*schedule != PipelineScheduleKind::kInterleaved && chunks != 1) {
    return Error{"--virtual-stages " + std::to_string(chunks) + " needs --schedule interleaved"};
  }
  PlanningInput input;
  // Before a profile of that many stages is read or modelled (0: from the profile, or 8).
  if (args.stages != 0) {
    if (Status s = CheckStages(args.stages); !s.ok()) return Error{"--stages: " + s.error().message};
    if (Status s = CheckStages(args.stages * chunks); !s.ok()) {
      return Error{"--stages x --virtual-stages: " + s.error().message};
    }
  }
  if (!args.profile_path.empty()) {
    // The profile has a stage per model chunk: devices x chunks of them.
    Result<AggregatedProfile> read = ReadProfileCsvWithWarnings(args.profile_path, args.stages * chunks);
    if (!read.ok()) return read.error();
    input.profile = std::move(read->profile);
    input.dropped = std::move(read->dropped);
    input.source = args.profile_path;
    if (args.microbatches <= 0) return Error{"--microbatches is required with --profile"};
    if (!args.p2p_power_w) return Error{"--p2p-power (blocking power in W) is required with --profile"};
    if (input.profile.num_stages() % chunks != 0) {
      return Error{args.profile_path + ": " + std::to_string(input.profile.num_stages()) +
                   " stages are not a multiple of --virtual-stages " + std::to_string(chunks) +
                   " (the profile needs a stage per model chunk: devices x virtual stages)"};
    }
  } else {
    const int devices = args.stages > 0 ? args.stages : 8;
    input.profile = MakeModelProfile(**model, devices);
    input.source = "built-in GPU model " + (*model)->name + " (" + (*model)->reference_workload + ")";
    if (chunks > 1) {
      Result<Profile> split = SplitStagesIntoChunks(input.profile, chunks);
      if (!split.ok()) return split.error();
      input.profile = std::move(*split);
      input.notes.push_back("each of the built-in model's " + std::to_string(devices) + " stages is cut into " +
                            std::to_string(chunks) + " chunks of 1/" + std::to_string(chunks) +
                            " its time and energy (profile/chunk_split.h)");
    }
  }
  PlannerOptions& options = input.options;
  options.num_microbatches = args.microbatches > 0 ? args.microbatches : default_microbatches;
  options.p2p_power_w = args.p2p_power_w ? *args.p2p_power_w : (*model)->p2p_power_w;
  options.schedule = *schedule;
  options.virtual_stages = chunks;
  if (PlanSplitsMeasuredBackward(input.profile, options)) {
    input.notes.push_back(
        "the profile has no backward_input / backward_weight rows: " + std::string(PipelineScheduleName(*schedule)) +
        " plans each as half of the backward's time and energy at every frequency");
  }
  Result<CostModelKind> cost_model = ParseCostModel(args.cost_model);
  if (!cost_model.ok()) return cost_model.error();
  options.cost_model = *cost_model;
  options.unit_time_s = args.unit_time_s;
  options.noise_factor = args.noise_factor;
  return input;
}

}  // namespace wattcut::cli
