// `wattcut frontier`: compute a pipeline's iteration time-energy frontier and its plans.
#include <iostream>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/cli/command.h"
#include "wattcut/cli/output_directory.h"
#include "wattcut/cli/planner_arguments.h"
#include "wattcut/emulate/all_max.h"
#include "wattcut/plan/plan_files.h"
#include "wattcut/plan/planner.h"

namespace wattcut::cli {
namespace {

constexpr int kDefaultMicrobatches = 12;

struct FrontierArgs {
  PlannerArguments planner;
  std::string plans = "all";
  std::string out_dir;
  bool overwrite = false;
};

int Run(const FrontierArgs& args) {
  const std::string name = "frontier";
  Result<PlanningInput> input = ResolvePlannerArguments(args.planner, kDefaultMicrobatches);
  if (!input.ok()) return ReportError(name, input.error());
  for (const DroppedFrequency& dropped : input->dropped) ReportWarning(name, DroppedFrequencyMessage(dropped));
  const Profile& profile = input->profile;
  const PlannerOptions& options = input->options;
  const std::string& source = input->source;

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
            << CostModelName(options.cost_model) << " cost model, blocking power " << options.p2p_power_w << " W\n"
            << "frontier: " << frontier->points().size() << " points from " << FixedDecimals(slowest.time_s, 4)
            << " s to " << FixedDecimals(t_min.time_s, 4) << " s\n"
            << "  T_min  " << FixedDecimals(t_min.time_s, 4) << " s  " << FixedDecimals(t_min.energy_j, 2)
            << " J  (plan " << PlanFileStem(fastest) << ")\n"
            << "  T*     " << FixedDecimals(t_star.time_s, 4) << " s  " << FixedDecimals(t_star.energy_j, 2)
            << " J  (plan " << PlanFileStem(cheapest)
            << ", T*/T_min = " << FixedDecimals(t_star.time_s / t_min.time_s, 3) << ")\n"
            << "  AllMax " << FixedDecimals(t_min.time_s, 4) << " s  " << FixedDecimals(all_max, 2)
            << " J  (every computation at max frequency, blocking until T_min)\n"
            << "intrinsic saving of the fastest plan vs AllMax: "
            << FixedDecimals(100 * (1 - t_min.energy_j / all_max), 2) << " %\n"
            << "wrote " << DisplayPath(args.out_dir) << "/frontier.csv, " << plans_written << " plans in "
            << DisplayPath(args.out_dir) << "/plans/, Zeus PointSolution exports in " << DisplayPath(args.out_dir)
            << "/zeus/\n";
  return 0;
}

}  // namespace

void AddFrontierCommand(CLI::App& app, CommandStatus& status) {
  auto args = std::make_shared<FrontierArgs>();
  CLI::App* sub = app.add_subcommand(
      "frontier", "Compute a pipeline's iteration time-energy frontier and the frequency plan of every point");
  AddPlannerOptions(*sub, args->planner, kDefaultMicrobatches);
  sub->add_option("--plans", args->plans, "Which plans to write to DIR/plans: all, ends (T_max, T*, T_min) or none")
      ->check(CLI::IsMember({"all", "ends", "none"}))
      ->capture_default_str();
  sub->add_option("--out", args->out_dir, "Output directory")->required();
  sub->add_flag("--overwrite", args->overwrite, "Replace DIR if it exists and is not empty");
  sub->callback([args, &status] { status.exit_code = Run(*args); });
}

}  // namespace wattcut::cli
