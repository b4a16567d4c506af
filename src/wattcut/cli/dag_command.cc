// `wattcut dag`: generic DAGs (plan/dag_problem.h, dag/dag_file.h).
//   wattcut dag frontier --dag FILE.json --out DIR   plans any DAG: DIR/frontier.wattcut, DIR/frontier.csv,
//                                                    DIR/plans.jsonl
//   wattcut dag export --profile P --stages S ... --out FILE.json   the DAG a pipeline schedule builds
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/general_text.h"
#include "wattcut/cli/command.h"
#include "wattcut/cli/dag_frontier.h"
#include "wattcut/cli/output_directory.h"
#include "wattcut/cli/planner_arguments.h"
#include "wattcut/plan/dag_export.h"
#include "wattcut/plan/dag_frontier_file.h"
#include "wattcut/plan/dag_problem.h"
#include "wattcut/plan/frontier_file.h"
#include "wattcut/plan/frontier_power.h"
#include "wattcut/plan/plan_files.h"
#include "wattcut/plan/planner_defaults.h"

namespace wattcut::cli {
namespace {

namespace fs = std::filesystem;

struct DagExportArgs {
  PlannerArguments planner;
  std::string out_file;
  bool overwrite = false;
};

// plans.jsonl writes every operation's knob on every this many lines (and the first).
constexpr size_t kKnobsEveryPoints = 256;

// One line per point: {"point", "time_s", "energy_j", "knobs" | "changed_knobs"}; "knobs" (every
// operation, in the file's order) on the first line and every kKnobsEveryPoints-th, else
// "changed_knobs" (the operations whose knob differs from the line before).
std::string PlansJsonl(const GenericDag& dag, const DagFrontier& frontier) {
  std::vector<std::string> quoted_names;
  quoted_names.reserve(dag.operations.size());
  for (const DagOperation& op : dag.operations)
    quoted_names.push_back(nlohmann::json(op.name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  std::vector<int64_t> durations = frontier.start_durations();
  std::vector<int> knobs(durations.size());
  for (size_t op = 0; op < durations.size(); ++op) knobs[op] = frontier.KnobFor(static_cast<int>(op), durations[op]);
  std::string out;
  for (size_t i = 0; i < frontier.points().size(); ++i) {
    const FrontierPoint& p = frontier.points()[i];
    std::vector<size_t> changed;
    for (const DurationChange& c : frontier.ChangesAt(i)) {
      const auto op = static_cast<size_t>(c.computation);
      durations[op] = c.duration_units;
      const int knob = frontier.KnobFor(c.computation, c.duration_units);
      if (knob != knobs[op]) changed.push_back(op);
      knobs[op] = knob;
    }
    out += "{\"point\": " + std::to_string(i) + ", \"time_s\": " + nlohmann::json(p.time_s).dump() +
           ", \"energy_j\": " + nlohmann::json(p.energy_j).dump();
    const bool full = i % kKnobsEveryPoints == 0;
    out += full ? ", \"knobs\": {" : ", \"changed_knobs\": {";
    auto add = [&](size_t op, bool first) {
      out += (first ? "" : ", ") + quoted_names[op] + ": " + std::to_string(knobs[op]);
    };
    if (full) {
      for (size_t op = 0; op < knobs.size(); ++op) add(op, op == 0);
    } else {
      std::sort(changed.begin(), changed.end());
      for (size_t k = 0; k < changed.size(); ++k) add(changed[k], k == 0);
    }
    out += "}}\n";
  }
  return out;
}

// Writes `text` to `path` through a sibling temporary file renamed into place.
Status WriteFileAtomically(const std::string& path, const std::string& text, bool overwrite) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return Error{path + ": is a directory; --out names the DAG file to write"};
  if (!overwrite && fs::exists(path, ec)) return Error::Conflict(path + ": exists (use --overwrite to replace it)");
  const std::string partial = path + ".partial-" + std::to_string(::getpid());
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (!out) return Error::IOError(path + ": cannot create " + partial);
    out << text;
    out.close();
    if (!out) {
      fs::remove(partial, ec);
      return Error::IOError(path + ": cannot write " + partial);
    }
  }
  fs::rename(partial, path, ec);
  if (ec) {
    fs::remove(partial, ec);
    return Error::IOError(path + ": cannot move the written file into place");
  }
  return Status::Ok();
}

int RunExport(const DagExportArgs& args) {
  const std::string name = "dag export";
  // The profile, as `wattcut frontier` reads it; with --profile, --microbatches is required.
  Result<PlanningInput> input = ResolvePlannerArguments(args.planner, /*default_microbatches=*/12);
  if (!input.ok()) return ReportError(name, input.error());
  for (const DroppedFrequency& dropped : input->dropped) ReportWarning(name, DroppedFrequencyMessage(dropped));
  for (const std::string& note : input->notes) ReportWarning(name, note);
  Result<GenericDag> dag = PipelineDag(input->profile, input->options);
  if (!dag.ok()) return ReportError(name, dag.error());
  if (Status s = WriteFileAtomically(args.out_file, DagText(*dag), args.overwrite); !s.ok()) {
    return ReportError(name, s.error());
  }
  std::cout << "wrote " << args.out_file << ": " << dag->operations.size() << " operations, " << dag->edges.size()
            << " edges, " << dag->devices.size() << " devices (" << input->source << ", "
            << PipelineScheduleName(input->options.schedule) << ", " << input->options.num_microbatches
            << " microbatches); plan it with: wattcut dag frontier --dag " << args.out_file << " --out DIR\n";
  return 0;
}

}  // namespace

int RunDagFrontier(const std::string& name, const DagFrontierArgs& args) {
  Result<CostModelKind> cost_model = ParseCostModel(args.cost_model);
  if (!cost_model.ok()) return ReportError(name, cost_model.error());
  Result<GenericDag> dag = ReadDagFile(args.dag_path);
  if (!dag.ok()) return ReportError(name, dag.error());
  Result<OutputDirectory> out = OutputDirectory::Create(args.out_dir, args.overwrite);
  if (!out.ok()) return ReportError(name, out.error());

  DagPlannerOptions options;
  options.unit_time_s = DagUnitTime(*dag, args.unit_time_s, kDefaultUnitTimeS);
  options.noise_factor = args.noise_factor;
  options.cost_model = *cost_model;
  Result<DagPlanningProblem> planning = BuildDagProblem(*dag, options);
  if (!planning.ok()) return ReportError(name, planning.error().WithContext(args.dag_path + ": "));
  Result<DagFrontier> frontier = SolveDagFrontier(*dag, *planning);
  if (!frontier.ok()) return ReportError(name, frontier.error().WithContext(args.dag_path + ": "));
  // Every point's peak 1-s power, from its execution timeline (as a pipeline's).
  Result<FrontierPower> power =
      FrontierPower::Create(*frontier, planning->problem, planning->unit_time_s, planning->blocking_power_w);
  if (!power.ok()) return ReportError(name, power.error());
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (Status s = power->SetPeakPowers(*frontier, kPeakPowerWindowS, threads); !s.ok()) {
    return ReportError(name, s.error());
  }

  Status status = out->Write(std::string(kFrontierFileName), DagFrontierFileText(*frontier));
  if (status.ok()) status = out->Write("frontier.csv", FrontierCsv(*frontier));
  if (status.ok()) status = out->Write("plans.jsonl", PlansJsonl(*dag, *frontier));
  if (status.ok()) status = out->Commit();
  if (!status.ok()) return ReportError(name, status.error());

  const auto& points = frontier->points();
  const size_t cheapest = frontier->min_energy_index();
  const FrontierPoint& slowest = points.front();
  const FrontierPoint& fastest = points.back();
  std::cout << "dag: " << args.dag_path << ", " << dag->operations.size() << " operations, " << dag->edges.size()
            << " edges, " << dag->devices.size() << " devices; unit time " << options.unit_time_s << " s, "
            << CostModelName(options.cost_model) << " cost model\n"
            << "frontier: " << points.size() << " points from " << FixedDecimals(slowest.time_s, 4) << " s to "
            << FixedDecimals(fastest.time_s, 4) << " s\n"
            << "  T_min  " << FixedDecimals(fastest.time_s, 4) << " s  " << FixedDecimals(fastest.energy_j, 2)
            << " J  (point " << points.size() - 1 << ")\n"
            << "  T*     " << FixedDecimals(points[cheapest].time_s, 4) << " s  "
            << FixedDecimals(points[cheapest].energy_j, 2) << " J  (point " << cheapest << ")\n"
            << "wrote " << DisplayPath(args.out_dir) << "/frontier.wattcut, frontier.csv, plans.jsonl; look up a "
            << "plan with: wattcut plan show " << DisplayPath(args.out_dir) << " --time T\n";
  return 0;
}

void AddDagCommand(CLI::App& app, CommandStatus& status) {
  CLI::App* dag = app.add_subcommand("dag", "Generic DAGs (wattcut.dag/v1): plan any DAG, or export a pipeline's");
  dag->require_subcommand(1);

  auto frontier_args = std::make_shared<DagFrontierArgs>();
  CLI::App* frontier =
      dag->add_subcommand("frontier", "Compute the time-energy frontier of a DAG file and every point's knobs");
  frontier->add_option("--dag", frontier_args->dag_path, "The wattcut.dag/v1 file")->required();
  frontier
      ->add_option("--out", frontier_args->out_dir, "Output directory (frontier.wattcut, frontier.csv, plans.jsonl)")
      ->required();
  frontier->add_option("--unit-time", frontier_args->unit_time_s,
                       "Seconds per unit of planned time (overrides the file's unit_time_s; " +
                           GeneralText(kDefaultUnitTimeS) + " when neither)");
  frontier->add_option("--noise-factor", frontier_args->noise_factor, "Soft Pareto filter factor in (0, 1]")
      ->capture_default_str();
  frontier->add_option("--cost-model", frontier_args->cost_model, "exponential or convex-hull")->capture_default_str();
  frontier->add_flag("--overwrite", frontier_args->overwrite, "Replace DIR if it exists and is not empty");
  frontier->callback([frontier_args, &status] { status.exit_code = RunDagFrontier("dag frontier", *frontier_args); });

  auto export_args = std::make_shared<DagExportArgs>();
  CLI::App* exporter =
      dag->add_subcommand("export", "Write the DAG a pipeline schedule builds, with the profile's measurements");
  AddPlannerOptions(*exporter, export_args->planner, /*default_microbatches=*/12);
  exporter->add_option("--out", export_args->out_file, "The wattcut.dag/v1 file to write")->required();
  exporter->add_flag("--overwrite", export_args->overwrite, "Replace the file if it exists");
  exporter->callback([export_args, &status] { status.exit_code = RunExport(*export_args); });
}

}  // namespace wattcut::cli
