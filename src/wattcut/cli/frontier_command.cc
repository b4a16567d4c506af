// `wattcut frontier`: compute a pipeline's iteration time-energy frontier and its plans.
#include <cstdio>
#include <iostream>
#include <optional>

#include "wattcut/cli/command.h"
#include "wattcut/cli/output_directory.h"
#include "wattcut/emulate/all_max.h"
#include "wattcut/plan/plan_files.h"
#include "wattcut/plan/planner.h"
#include "wattcut/profile/gpu_model.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut::cli {
namespace {

struct FrontierArgs {
  std::string profile_path;
  std::string gpu_model = "a100-sxm";
  int stages = 0;
  int microbatches = 0;
  std::optional<double> p2p_power_w;
  std::string schedule = "1f1b";
  double unit_time_s = 0.001;
  double noise_factor = 0.95;
  std::string cost_model = "exponential";
  std::string plans = "all";
  std::string out_dir;
  bool overwrite = false;
};

std::string Format(const char* fmt, double a) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), fmt, a);
  return buffer;
}

int Run(const FrontierArgs& args) {
  const std::string name = "frontier";
  // Profile: a file, or the built-in GPU model's.
  Profile profile;
  PlannerOptions options;
  std::string source;
  Result<const GpuModel*> model = FindGpuModel(args.gpu_model);
  if (!model.ok()) return ReportError(name, model.error());
  if (!args.profile_path.empty()) {
    Result<Profile> read = ReadProfileCsv(args.profile_path, args.stages);
    if (!read.ok()) return ReportError(name, read.error());
    profile = std::move(read).value();
    source = args.profile_path;
    if (args.microbatches <= 0) {
      return ReportError(name, Error{"--microbatches is required with --profile"});
    }
    if (!args.p2p_power_w) {
      return ReportError(name, Error{"--p2p-power (blocking power in W) is required with --profile"});
    }
  } else {
    int stages = args.stages > 0 ? args.stages : 8;
    profile = MakeModelProfile(**model, stages);
    source = "built-in GPU model " + (*model)->name + " (" + (*model)->reference_workload + ")";
  }
  options.num_microbatches = args.microbatches > 0 ? args.microbatches : 12;
  options.p2p_power_w = args.p2p_power_w ? *args.p2p_power_w : (*model)->p2p_power_w;
  Result<PipelineScheduleKind> schedule = ParsePipelineSchedule(args.schedule);
  if (!schedule.ok()) return ReportError(name, schedule.error());
  options.schedule = *schedule;
  Result<CostModelKind> cost_model = ParseCostModel(args.cost_model);
  if (!cost_model.ok()) return ReportError(name, cost_model.error());
  options.cost_model = *cost_model;
  options.unit_time_s = args.unit_time_s;
  options.noise_factor = args.noise_factor;

  Result<OutputDirectory> out = OutputDirectory::Create(args.out_dir, args.overwrite);
  if (!out.ok()) return ReportError(name, out.error());

  Result<Frontier> frontier = ComputeFrontier(profile, options);
  if (!frontier.ok()) return ReportError(name, frontier.error());

  Status status = out->Write("frontier.csv", FrontierCsv(*frontier));
  const size_t fastest = frontier->fastest_index();
  const size_t cheapest = frontier->min_energy_index();
  size_t plans_written = 0;
  for (size_t i = 0; status.ok() && i < frontier->points().size(); ++i) {
    bool wanted = args.plans == "all" || (args.plans == "ends" && (i == 0 || i == fastest || i == cheapest));
    if (!wanted) continue;
    status = out->Write("plans/" + PlanFileStem(i) + ".json", PlanJson(*frontier, i));
    ++plans_written;
  }
  if (status.ok()) status = out->Write("zeus/fastest.py", ZeusPlanLiteral(frontier->PlanAt(fastest)));
  if (status.ok()) status = out->Write("zeus/min_energy.py", ZeusPlanLiteral(frontier->PlanAt(cheapest)));
  if (status.ok()) status = out->Commit();
  if (!status.ok()) return ReportError(name, status.error());

  const FrontierPoint& t_min = frontier->points()[fastest];
  const FrontierPoint& t_star = frontier->points()[cheapest];
  const FrontierPoint& slowest = frontier->points().front();
  double all_max = AllMaxEnergy(profile, frontier->setup().schedule, t_min.time_s, options.p2p_power_w);
  std::cout << "profile: " << source << "\n"
            << "pipeline: " << profile.num_stages() << " stages x " << options.num_microbatches << " microbatches, "
            << PipelineScheduleName(options.schedule) << ", unit time " << options.unit_time_s << " s, "
            << CostModelName(options.cost_model) << " cost model, blocking power " << options.p2p_power_w
            << " W\n"
            << "frontier: " << frontier->points().size() << " points from " << Format("%.4f", slowest.time_s)
            << " s to " << Format("%.4f", t_min.time_s) << " s\n"
            << "  T_min  " << Format("%.4f", t_min.time_s) << " s  " << Format("%.2f", t_min.energy_j)
            << " J  (plan " << PlanFileStem(fastest) << ")\n"
            << "  T*     " << Format("%.4f", t_star.time_s) << " s  " << Format("%.2f", t_star.energy_j)
            << " J  (plan " << PlanFileStem(cheapest) << ", T*/T_min = "
            << Format("%.3f", t_star.time_s / t_min.time_s) << ")\n"
            << "  AllMax " << Format("%.4f", t_min.time_s) << " s  " << Format("%.2f", all_max)
            << " J  (every computation at max frequency, blocking until T_min)\n"
            << "intrinsic saving of the fastest plan vs AllMax: "
            << Format("%.2f", 100 * (1 - t_min.energy_j / all_max)) << " %\n"
            << "wrote " << args.out_dir << "/frontier.csv, " << plans_written << " plans in " << args.out_dir
            << "/plans/, Zeus PointSolution exports in " << args.out_dir << "/zeus/\n";
  return 0;
}

}  // namespace

void AddFrontierCommand(CLI::App& app, CommandStatus& status) {
  auto args = std::make_shared<FrontierArgs>();
  CLI::App* sub = app.add_subcommand(
      "frontier", "Compute a pipeline's iteration time-energy frontier and the frequency plan of every point");
  sub->add_option("--profile", args->profile_path,
                  "Profile CSV (stage,instruction,frequency,time,energy; or the Merak/Zeus per-rank layout). "
                  "Without it, a built-in GPU model's profile is used")
      ->check(CLI::ExistingFile);
  sub->add_option("--gpu-model", args->gpu_model, "Built-in GPU model when no --profile is given: a100-sxm or a40")
      ->capture_default_str();
  sub->add_option("--stages", args->stages,
                  "Number of pipeline stages (with --profile: checked against it; default: from the profile, or 8)");
  sub->add_option("--microbatches", args->microbatches, "Microbatches per iteration (default 12 without --profile)");
  sub->add_option("--p2p-power", args->p2p_power_w,
                  "Blocking power of a waiting GPU, in W (required with --profile; default: the GPU model's)");
  sub->add_option("--schedule", args->schedule, "Pipeline schedule: 1f1b or gpipe")->capture_default_str();
  sub->add_option("--unit-time", args->unit_time_s, "Unit time in seconds")->capture_default_str();
  sub->add_option("--noise-factor", args->noise_factor,
                  "Soft Pareto filter factor used when 3 or fewer options survive the strict filter")
      ->capture_default_str();
  sub->add_option("--cost-model", args->cost_model, "exponential or convex-hull")->capture_default_str();
  sub->add_option("--plans", args->plans, "Which plans to write to DIR/plans: all, ends (T_max, T*, T_min) or none")
      ->check(CLI::IsMember({"all", "ends", "none"}))
      ->capture_default_str();
  sub->add_option("--out", args->out_dir, "Output directory")->required();
  sub->add_flag("--overwrite", args->overwrite, "Replace DIR if it exists and is not empty");
  sub->callback([args, &status] { status.exit_code = Run(*args); });
}

}  // namespace wattcut::cli
