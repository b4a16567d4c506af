// `wattcut frontier`: compute a pipeline's iteration time-energy frontier and its plans.
#include <algorithm>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/cli/command.h"
#include "wattcut/cli/dag_frontier.h"
#include "wattcut/cli/output_directory.h"
#include "wattcut/cli/planner_arguments.h"
#include "wattcut/plan/all_max.h"
#include "wattcut/plan/dag_export.h"
#include "wattcut/plan/frontier_file.h"
#include "wattcut/plan/frontier_power.h"
#include "wattcut/plan/plan_files.h"
#include "wattcut/plan/plan_lookup.h"
#include "wattcut/plan/planner.h"

namespace wattcut::cli {
namespace {

constexpr int kDefaultMicrobatches = 12;

struct FrontierArgs {
  PlannerArguments planner;
  std::string plans = "none";
  std::string out_dir;
  bool overwrite = false;
  std::string dag_path;     // --dag: plan this wattcut.dag/v1 file instead of a pipeline
  bool export_dag = false;  // --export-dag: DIR/dag.json, the DAG the pipeline's schedule builds
  // The options given on the command line that only a pipeline has (refused with --dag).
  std::vector<std::string> pipeline_options_given;
  bool unit_time_given = false;
};

// The options of a pipeline that a DAG file replaces.
const std::vector<std::string>& PipelineOnlyOptions() {
  static const std::vector<std::string> names = {"--profile",        "--gpu-model", "--stages",
                                                 "--microbatches",   "--p2p-power", "--schedule",
                                                 "--virtual-stages", "--plans",     "--export-dag"};
  return names;
}

int RunDag(const FrontierArgs& args) {
  if (!args.pipeline_options_given.empty()) {
    std::string given;
    for (const std::string& option : args.pipeline_options_given) given += (given.empty() ? "" : ", ") + option;
    const bool one = args.pipeline_options_given.size() == 1;
    return ReportError("frontier", Error::InvalidArgument("--dag plans the DAG file's operations and options: " +
                                                          given + (one ? " describes" : " describe") +
                                                          " a pipeline and " + (one ? "does" : "do") + " not apply"));
  }
  DagFrontierArgs dag;
  dag.dag_path = args.dag_path;
  dag.out_dir = args.out_dir;
  if (args.unit_time_given) dag.unit_time_s = args.planner.unit_time_s;
  dag.noise_factor = args.planner.noise_factor;
  dag.cost_model = args.planner.cost_model;
  dag.overwrite = args.overwrite;
  return RunDagFrontier("frontier", dag);
}

int Run(const FrontierArgs& args) {
  if (!args.dag_path.empty()) return RunDag(args);
  const std::string name = "frontier";
  Result<PlanningInput> input = ResolvePlannerArguments(args.planner, kDefaultMicrobatches);
  if (!input.ok()) return ReportError(name, input.error());
  for (const DroppedFrequency& dropped : input->dropped) ReportWarning(name, DroppedFrequencyMessage(dropped));
  for (const std::string& note : input->notes) ReportWarning(name, note);
  const Profile& profile = input->profile;
  const PlannerOptions& options = input->options;
  const std::string& source = input->source;

  Result<OutputDirectory> out = OutputDirectory::Create(args.out_dir, args.overwrite);
  if (!out.ok()) return ReportError(name, out.error());

  if (args.plans == "all") ReportWarning(name, "--plans all is deprecated: it is --plans json");
  const std::string plans = args.plans == "all" ? "json" : args.plans;

  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  Result<Frontier> frontier = ComputeFrontierWithPeakPowers(profile, options, threads);
  if (!frontier.ok()) return ReportError(name, frontier.error());

  const std::string compact = FrontierFileText(*frontier);
  Status status = out->Write("frontier.wattcut", compact);
  if (status.ok()) status = out->Write("frontier.csv", FrontierCsv(*frontier));
  const size_t fastest = frontier->fastest_index();
  const size_t cheapest = frontier->min_energy_index();
  size_t json_written = 0;
  size_t zeus_written = 0;
  for (size_t i = 0; status.ok() && i < frontier->points().size(); ++i) {
    const bool end = i == 0 || i == fastest || i == cheapest;
    if (plans == "json" || (plans == "ends" && end)) {
      status = out->Write("plans/" + PlanFileStem(i) + ".json", PlanJson(*frontier, i));
      ++json_written;
    }
    if (status.ok() && (plans == "zeus" || (plans == "ends" && end))) {
      status = out->Write("zeus/" + PlanFileStem(i) + ".py", ZeusPlanLiteral(frontier->PlanAt(i)));
      ++zeus_written;
    }
  }
  if (status.ok()) status = out->Write("zeus/fastest.py", ZeusPlanLiteral(frontier->PlanAt(fastest)));
  if (status.ok()) status = out->Write("zeus/min_energy.py", ZeusPlanLiteral(frontier->PlanAt(cheapest)));
  if (status.ok() && args.export_dag) {
    Result<GenericDag> dag = PipelineDag(profile, options);
    status = dag.ok() ? out->Write("dag.json", DagText(*dag)) : Status(dag.error());
  }
  if (status.ok()) status = out->Commit();
  if (!status.ok()) return ReportError(name, status.error());

  const FrontierPoint& t_min = frontier->points()[fastest];
  const FrontierPoint& t_star = frontier->points()[cheapest];
  const FrontierPoint& slowest = frontier->points().front();
  double all_max = AllMaxEnergy(profile, frontier->setup().schedule, t_min.time_s, options.p2p_power_w);
  auto power_text = [&](size_t i) {
    const FrontierPoint& p = frontier->points()[i];
    return FixedDecimals(AveragePowerPerGpuW(*frontier, i), 1) + " W a GPU on average, peak 1-s " +
           FixedDecimals(p.peak_1s_power_w.value_or(0) / frontier->num_stages(), 1) + " W a GPU";
  };
  std::cout << "profile: " << source << "\n"
            << "pipeline: " << PipelineDevices(profile, options) << " stages"
            << (options.virtual_stages > 1 ? " x " + std::to_string(options.virtual_stages) + " chunks" : "") << " x "
            << options.num_microbatches << " microbatches, " << PipelineScheduleName(options.schedule) << ", unit time "
            << options.unit_time_s << " s, " << CostModelName(options.cost_model) << " cost model, blocking power "
            << options.p2p_power_w << " W\n"
            << "frontier: " << frontier->points().size() << " points from " << FixedDecimals(slowest.time_s, 4)
            << " s to " << FixedDecimals(t_min.time_s, 4) << " s\n"
            << "  T_min  " << FixedDecimals(t_min.time_s, 4) << " s  " << FixedDecimals(t_min.energy_j, 2)
            << " J  (plan " << PlanFileStem(fastest) << "; " << power_text(fastest) << ")\n"
            << "  T*     " << FixedDecimals(t_star.time_s, 4) << " s  " << FixedDecimals(t_star.energy_j, 2)
            << " J  (plan " << PlanFileStem(cheapest)
            << ", T*/T_min = " << FixedDecimals(t_star.time_s / t_min.time_s, 3) << "; " << power_text(cheapest)
            << ")\n"
            << "  AllMax " << FixedDecimals(t_min.time_s, 4) << " s  " << FixedDecimals(all_max, 2)
            << " J  (every computation at max frequency, blocking until T_min)\n"
            << "intrinsic saving of the fastest plan vs AllMax: "
            << FixedDecimals(100 * (1 - t_min.energy_j / all_max), 2) << " %\n"
            << "wrote " << DisplayPath(args.out_dir) << "/frontier.wattcut (every plan, "
            << (compact.size() < 1000000 ? FixedDecimals(static_cast<double>(compact.size()) / 1e3, 1) + " kB"
                                         : FixedDecimals(static_cast<double>(compact.size()) / 1e6, 1) + " MB")
            << "), " << DisplayPath(args.out_dir) << "/frontier.csv";
  if (json_written > 0) std::cout << ", " << json_written << " plans in " << DisplayPath(args.out_dir) << "/plans/";
  if (zeus_written > 0) std::cout << ", " << zeus_written << " Zeus plans in " << DisplayPath(args.out_dir) << "/zeus/";
  if (args.export_dag) std::cout << ", the pipeline's DAG in " << DisplayPath(args.out_dir) << "/dag.json";
  std::cout << ", Zeus PointSolution exports of T_min and T* in " << DisplayPath(args.out_dir) << "/zeus/\n"
            << "look plans up with: wattcut plan show " << DisplayPath(args.out_dir)
            << " --point N | --time T | --slowdown K | --power-per-gpu W\n";
  return 0;
}

}  // namespace

void AddFrontierCommand(CLI::App& app, CommandStatus& status) {
  auto args = std::make_shared<FrontierArgs>();
  CLI::App* sub = app.add_subcommand(
      "frontier", "Compute a pipeline's iteration time-energy frontier and the frequency plan of every point");
  AddPlannerOptions(*sub, args->planner, kDefaultMicrobatches);
  sub->add_option("--plans", args->plans,
                  "Plans written besides DIR/frontier.wattcut (which holds them all): none, json (every plan as "
                  "DIR/plans/NNNNN.json), zeus (every plan as DIR/zeus/NNNNN.py), ends (both, for T_max, T* and "
                  "T_min); all is a deprecated name of json")
      ->check(CLI::IsMember({"none", "json", "zeus", "ends", "all"}))
      ->capture_default_str();
  sub->add_option("--dag", args->dag_path,
                  "Plan this wattcut.dag/v1 file (any DAG: operations with measured options, edges) instead of a "
                  "pipeline: DIR/frontier.csv and DIR/plans.jsonl, as `wattcut dag frontier` writes them");
  sub->add_flag("--export-dag", args->export_dag,
                "Also write DIR/dag.json: the DAG the pipeline's schedule builds, with the profile's measurements, "
                "to edit and plan with --dag");
  sub->add_option("--out", args->out_dir, "Output directory")->required();
  sub->add_flag("--overwrite", args->overwrite, "Replace DIR if it exists and is not empty");
  sub->callback([args, sub, &status] {
    for (const std::string& option : PipelineOnlyOptions()) {
      if (sub->get_option(option)->count() > 0) args->pipeline_options_given.push_back(option);
    }
    args->unit_time_given = sub->get_option("--unit-time")->count() > 0;
    status.exit_code = Run(*args);
  });
}

}  // namespace wattcut::cli
