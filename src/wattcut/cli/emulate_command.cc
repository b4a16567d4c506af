// `wattcut emulate`: what Perseus saves on a data-parallel job of pipelines when one
// pipeline straggles, against AllMax, EnvPipe and a ZeusGlobal-like baseline; with
// --power-sweep, power reduction vs slowdown of uniform clock locks against Perseus.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/general_text.h"
#include "wattcut/cli/command.h"
#include "wattcut/cli/output_directory.h"
#include "wattcut/cli/planner_arguments.h"
#include "wattcut/emulate/emulation_charts.h"
#include "wattcut/emulate/envpipe.h"
#include "wattcut/emulate/power_sweep.h"
#include "wattcut/emulate/straggler_emulation.h"
#include "wattcut/plan/plan_files.h"
#include "wattcut/plan/planner.h"

namespace wattcut::cli {
namespace {

constexpr int kDefaultMicrobatches = 96;

struct EmulateArgs {
  PlannerArguments planner;
  std::string frontier_dir;
  int pipelines = 16;
  int tp = 1;
  double time_scale = 1;
  std::string slowdown = "1.0:1.5:0.05";
  std::string out_dir;
  bool overwrite = false;
  bool power_sweep = false;
  double peak_window_s = 1.0;
};

// Checks that the frontier.csv of an earlier `wattcut frontier` run in `dir` is the
// frontier of this profile and these options, point for point.
Status CheckStoredFrontier(const std::string& dir, const Frontier& frontier) {
  std::string path = dir + "/frontier.csv";
  Result<CsvTable> table = CsvTable::Read(path);
  if (!table.ok()) return table.error();
  auto time_col = table->column("time");
  auto energy_col = table->column("energy");
  if (!time_col || !energy_col) return Error{path + ":1: expected the columns plan,time,energy of wattcut frontier"};
  if (table->rows().size() != frontier.points().size()) {
    return Error{path + ": has " + std::to_string(table->rows().size()) +
                 " points, but this profile and these options give " + std::to_string(frontier.points().size()) +
                 " (was it computed from another profile or with other options?)"};
  }
  for (size_t i = 0; i < table->rows().size(); ++i) {
    Result<double> t = table->number(table->rows()[i], *time_col);
    if (!t.ok()) return t.error();
    Result<double> e = table->number(table->rows()[i], *energy_col);
    if (!e.ok()) return e.error();
    const FrontierPoint& p = frontier.points()[i];
    if (std::abs(*t - p.time_s) > 1e-9 * std::max(1.0, p.time_s) ||
        std::abs(*e - p.energy_j) > 1e-6 * std::max(1.0, p.energy_j)) {
      return Error{path + ":" + std::to_string(table->rows()[i].line) +
                   ": differs from the frontier of this profile and these options (time " + FixedDecimals(p.time_s, 4) +
                   " s, energy " + FixedDecimals(p.energy_j, 3) + " J expected)"};
    }
  }
  return Status::Ok();
}

// `--power-sweep`: power reduction vs slowdown, uniform clock locks against Perseus's plans
// (emulate/power_sweep.h, docs/power-capped-training.md).
int RunPowerSweep(const EmulateArgs& args, const PlanningInput& input) {
  const std::string name = "emulate";
  const Profile& profile = input.profile;
  const PlannerOptions& options = input.options;
  if (args.tp < 1) return ReportError(name, Error{"--tp must be >= 1, got " + std::to_string(args.tp)});
  if (!(args.time_scale > 0)) return ReportError(name, Error{"--time-scale must be > 0"});
  if (!(args.peak_window_s > 0) || !std::isfinite(args.peak_window_s)) {
    return ReportError(name, Error{"--peak-window must be a positive number of seconds"});
  }
  Result<OutputDirectory> out = OutputDirectory::Create(args.out_dir, args.overwrite);
  if (!out.ok()) return ReportError(name, out.error());
  Result<PlanningProblem> planning = BuildPlanningProblem(profile, options);
  if (!planning.ok()) return ReportError(name, planning.error());
  Result<Frontier> frontier = SolveFrontier(*planning);
  if (!frontier.ok()) return ReportError(name, frontier.error());
  PowerSweepSetup setup;
  setup.window_s = args.peak_window_s;
  setup.time_scale = args.time_scale;
  setup.tensor_parallel = args.tp;
  Result<PowerSweep> sweep = SweepPower(profile, *planning, *frontier, setup);
  if (!sweep.ok()) return ReportError(name, sweep.error());
  if (!sweep->skipped_clocks_mhz.empty()) {
    std::string list;
    for (int clock : sweep->skipped_clocks_mhz) list += (list.empty() ? "" : ", ") + std::to_string(clock);
    ReportWarning(name, "uniform-lock leaves out clocks some stage and instruction did not measure: " + list + " MHz");
  }
  const int devices = PipelineDevices(profile, options);
  nlohmann::json config = {{"profile", input.source},
                           {"stages", devices},
                           {"microbatches", options.num_microbatches},
                           {"tensor_parallel", args.tp},
                           {"gpus_per_pipeline", devices * args.tp},
                           {"time_scale", args.time_scale},
                           {"p2p_power_w", options.p2p_power_w},
                           {"schedule", std::string(PipelineScheduleName(options.schedule))},
                           {"virtual_stages", options.virtual_stages},
                           {"unit_time_s", options.unit_time_s},
                           {"cost_model", std::string(CostModelName(options.cost_model))},
                           {"peak_window_s", args.peak_window_s}};
  Status status = out->Write("power_sweep.json", PowerSweepToJson(*sweep, config).dump(2) + "\n");
  const std::string workload =
      std::to_string(devices) + " stages x " + std::to_string(options.num_microbatches) + " microbatches";
  const PowerSweepReference& ref = sweep->reference;
  if (status.ok()) {
    status = out->Write(
        "power_sweep.svg",
        PowerSweepChartSvg(*sweep, "Power reduction vs slowdown, uniform clock lock vs Perseus (" + workload + ")",
                           ref.slowdown, ref.peak_reduction, "POLCA: 22 % peak at 10 % slowdown"));
  }
  if (status.ok()) status = out->Commit();
  if (!status.ok()) return ReportError(name, status.error());

  auto percent = [](const std::optional<double>& r) {
    return r ? FixedDecimals(100 * *r, 2) + " %" : std::string("none");
  };
  std::cout << "profile: " << input.source << "\n"
            << "pipeline: " << workload << ", " << args.tp << " tensor-parallel GPUs per stage\n"
            << "AllMax: iteration " << FixedDecimals(sweep->all_max.iteration_time_s, 4) << " s, average power "
            << FixedDecimals(sweep->all_max.avg_power_w, 1) << " W, peak " << GeneralText(args.peak_window_s)
            << "-s power " << FixedDecimals(sweep->all_max.peak_power_w, 1) << " W\n"
            << "uniform-lock: " << sweep->uniform_lock.size() << " clocks; perseus: " << sweep->perseus.size()
            << " frontier plans\n"
            << "least slowdown (T / T_AllMax) reaching each power reduction (first point that reaches it);\n"
            << "ratio = (perseus - 1) / (uniform-lock - 1):\n"
            << PowerSweepTableText(*sweep) << "POLCA's uniform lock: " << percent(ref.peak_reduction)
            << " peak server power for 10 % slowdown; here at slowdown <= " << FixedDecimals(ref.slowdown, 2)
            << ": uniform-lock " << percent(ref.uniform_lock_peak_reduction) << " (on the curve "
            << percent(ref.uniform_lock_interpolated_peak_reduction) << "), perseus "
            << percent(ref.perseus_peak_reduction) << " peak power reduction\n"
            << "wrote " << DisplayPath(args.out_dir) << "/{power_sweep.json, power_sweep.svg}\n";
  return 0;
}

int Run(const EmulateArgs& args) {
  const std::string name = "emulate";
  Result<PlanningInput> input = ResolvePlannerArguments(args.planner, kDefaultMicrobatches);
  if (!input.ok()) return ReportError(name, input.error());
  for (const DroppedFrequency& dropped : input->dropped) ReportWarning(name, DroppedFrequencyMessage(dropped));
  if (args.power_sweep) {
    for (const std::string& note : input->notes) ReportWarning(name, note);
    return RunPowerSweep(args, *input);
  }
  const Profile& profile = input->profile;
  const PlannerOptions& options = input->options;
  const std::string& source = input->source;
  // The baselines (EnvPipe, the Zeus-like global frequency) model one chunk per stage and a
  // whole backward.
  if (options.schedule != PipelineScheduleKind::k1F1B && options.schedule != PipelineScheduleKind::kGPipe) {
    return ReportError(name, Error{"--schedule " + std::string(PipelineScheduleName(options.schedule)) +
                                   ": the emulation's EnvPipe and Zeus baselines model 1f1b and gpipe only; "
                                   "'wattcut frontier' and 'wattcut schedule' plan and draw this schedule"});
  }
  for (const std::string& note : input->notes) ReportWarning(name, note);
  Result<std::vector<double>> slowdowns = ParseSlowdowns(args.slowdown);
  if (!slowdowns.ok()) return ReportError(name, slowdowns.error());
  if (args.pipelines < 1)
    return ReportError(name, Error{"--pipelines must be >= 1, got " + std::to_string(args.pipelines)});
  if (args.tp < 1) return ReportError(name, Error{"--tp must be >= 1, got " + std::to_string(args.tp)});
  if (!(args.time_scale > 0)) return ReportError(name, Error{"--time-scale must be > 0"});

  Result<OutputDirectory> out = OutputDirectory::Create(args.out_dir, args.overwrite);
  if (!out.ok()) return ReportError(name, out.error());

  Result<Frontier> frontier = ComputeFrontier(profile, options);
  if (!frontier.ok()) return ReportError(name, frontier.error());
  if (!args.frontier_dir.empty()) {
    Status s = CheckStoredFrontier(args.frontier_dir, *frontier);
    if (!s.ok()) return ReportError(name, s.error());
  }
  EnvPipePlan envpipe = PlanEnvPipe(profile, frontier->setup().schedule, options.p2p_power_w);

  EmulationSetup setup;
  setup.num_pipelines = args.pipelines;
  setup.tensor_parallel = args.tp;
  setup.time_scale = args.time_scale;
  setup.p2p_power_w = options.p2p_power_w;
  setup.slowdowns = *slowdowns;
  Result<EmulationResult> result = EmulateStragglers(profile, *frontier, envpipe, setup);
  if (!result.ok()) return ReportError(name, result.error());
  const double energy_scale = args.time_scale * args.tp;

  // summary.json and emulation.csv
  nlohmann::json summary;
  summary["format"] = "wattcut.emulation/v1";
  summary["config"] = {{"profile", source},
                       {"stages", profile.num_stages()},
                       {"microbatches", options.num_microbatches},
                       {"pipelines", args.pipelines},
                       {"gpus", static_cast<long>(args.pipelines) * args.tp * profile.num_stages()},
                       {"tensor_parallel", args.tp},
                       {"time_scale", args.time_scale},
                       {"p2p_power_w", options.p2p_power_w},
                       {"schedule", std::string(PipelineScheduleName(options.schedule))},
                       {"unit_time_s", options.unit_time_s},
                       {"cost_model", std::string(CostModelName(options.cost_model))}};
  summary["frontier"] = {{"points", frontier->points().size()},
                         {"t_min_s", result->t_min_s},
                         {"t_star_s", result->t_star_s},
                         {"t_star_over_t_min", result->t_star_s / result->t_min_s},
                         {"energy_at_t_min_j", result->energy_t_min_j},
                         {"energy_at_t_star_j", result->energy_t_star_j},
                         {"all_max_energy_j", result->all_max_energy_j}};
  summary["intrinsic_saving_percent"] = {{"perseus", result->intrinsic_saving_percent},
                                         {"envpipe", result->envpipe_intrinsic_saving_percent}};
  summary["envpipe"] = {{"iteration_time_s", result->envpipe_time_s}, {"energy_j", result->envpipe_energy_j}};
  nlohmann::json rows = nlohmann::json::array();
  std::string csv = "method,slowdown,iteration_time_s,energy_j,saving_percent,plan_time_s\n";
  for (const MethodResult& r : result->results) {
    rows.push_back({{"method", r.method},
                    {"slowdown", r.slowdown},
                    {"iteration_time_s", r.iteration_time_s},
                    {"energy_j", r.energy_j},
                    {"saving_percent", r.saving_percent},
                    {"plan_time_s", r.plan_time_s}});
    csv += r.method + ',' + GeneralText(r.slowdown) + ',' + GeneralText(r.iteration_time_s) + ',' +
           GeneralText(r.energy_j) + ',' + GeneralText(r.saving_percent) + ',' + GeneralText(r.plan_time_s) + '\n';
  }
  summary["results"] = rows;
  Status status = out->Write("summary.json", summary.dump(2) + "\n");
  if (status.ok()) status = out->Write("emulation.csv", csv);
  const std::string workload =
      std::to_string(profile.num_stages()) + " stages x " + std::to_string(options.num_microbatches) + " microbatches";
  if (status.ok()) {
    status = out->Write("frontier.svg", FrontierChartSvg(*frontier, *result, args.time_scale, energy_scale,
                                                         "Iteration time-energy frontier (" + workload + ")"));
  }
  if (status.ok()) {
    status = out->Write("savings.svg", SavingsChartSvg(*result, "Job energy saving with one straggler (" +
                                                                    std::to_string(args.pipelines) + " pipelines)"));
  }
  if (status.ok()) {
    status = out->Write("timeline_fastest.svg",
                        PlanTimelineSvg(*frontier, frontier->fastest_index(), args.time_scale,
                                        "Perseus fastest plan (T_min): one lane per stage, gaps are blocking"));
  }
  if (status.ok()) {
    status = out->Write(
        "timeline_min_energy.svg",
        PlanTimelineSvg(*frontier, frontier->min_energy_index(), args.time_scale, "Perseus minimum-energy plan (T*)"));
  }
  if (status.ok()) status = out->Commit();
  if (!status.ok()) return ReportError(name, status.error());

  std::cout << "profile: " << source << "\n"
            << "job: " << args.pipelines << " pipelines x " << profile.num_stages() << " stages x " << args.tp
            << " tensor-parallel GPUs = " << static_cast<long>(args.pipelines) * args.tp * profile.num_stages()
            << " GPUs; " << workload << "\n"
            << "frontier: " << frontier->points().size() << " points, T_min " << FixedDecimals(result->t_min_s, 3)
            << " s, T* " << FixedDecimals(result->t_star_s, 3) << " s, T*/T_min "
            << FixedDecimals(result->t_star_s / result->t_min_s, 3) << "\n"
            << "intrinsic saving per pipeline: Perseus " << FixedDecimals(result->intrinsic_saving_percent, 2)
            << " %, EnvPipe " << FixedDecimals(result->envpipe_intrinsic_saving_percent, 2) << " %\n"
            << "saving vs AllMax with one straggler:\n"
            << "  slowdown   perseus  intrinsic   envpipe  zeus-global\n";
  std::map<double, std::map<std::string, double>> table;
  for (const MethodResult& r : result->results) table[r.slowdown][r.method] = r.saving_percent;
  size_t printed = 0;
  const size_t every = std::max<size_t>(1, table.size() / 12);
  for (const auto& [k, m] : table) {
    if (printed++ % every != 0 && printed != table.size()) continue;
    char line[160];
    std::snprintf(line, sizeof(line), "  %8.3f  %7.2f %%  %7.2f %%  %7.2f %%  %9.2f %%\n", k, m.at("perseus"),
                  m.at("perseus-intrinsic"), m.at("envpipe"), m.at("zeus-global"));
    std::cout << line;
  }
  std::cout
      << "wrote " << DisplayPath(args.out_dir)
      << "/{summary.json, emulation.csv, frontier.svg, savings.svg, timeline_fastest.svg, timeline_min_energy.svg}\n";
  return 0;
}

}  // namespace

void AddEmulateCommand(CLI::App& app, CommandStatus& status) {
  auto args = std::make_shared<EmulateArgs>();
  CLI::App* sub = app.add_subcommand(
      "emulate", "Emulate a data-parallel job of pipelines with one straggler: Perseus vs AllMax, EnvPipe, ZeusGlobal");
  AddPlannerOptions(*sub, args->planner, kDefaultMicrobatches);
  sub->add_option("--frontier", args->frontier_dir,
                  "Directory of a `wattcut frontier` run for the same profile and options: checked against this run");
  sub->add_option("--pipelines", args->pipelines, "Data-parallel pipelines")->capture_default_str();
  sub->add_option("--tp", args->tp, "Tensor-parallel degree: multiplies computation energy and blocking power")
      ->capture_default_str();
  sub->add_option("--time-scale", args->time_scale, "Scales profiled times and energies (the artifact used 10)")
      ->capture_default_str();
  sub->add_option("--slowdown", args->slowdown, "Straggler slowdown: a factor (1.2) or a range start:stop:step")
      ->capture_default_str();
  sub->add_flag("--power-sweep", args->power_sweep,
                "Instead of the straggler emulation: power reduction vs slowdown of one pipeline, uniform clock "
                "locks against Perseus's plans (power_sweep.json, power_sweep.svg)");
  sub->add_option("--peak-window", args->peak_window_s, "With --power-sweep: the peak power's window (s)")
      ->capture_default_str();
  sub->add_option("--out", args->out_dir, "Output directory")->required();
  sub->add_flag("--overwrite", args->overwrite, "Replace DIR if it exists and is not empty");
  sub->callback([args, sub, &status] {
    // Checked here rather than with CLI11's excludes / needs, which would print themselves into
    // the option column of --help (and the man page made from it).
    if (args->power_sweep) {
      for (const char* straggler_only : {"--slowdown", "--pipelines", "--frontier"}) {
        if (sub->count(straggler_only) > 0) {
          status.exit_code =
              ReportError("emulate", Error{std::string(straggler_only) + " is an option of the straggler emulation, "
                                                                         "not of --power-sweep"});
          return;
        }
      }
    } else if (sub->count("--peak-window") > 0) {
      status.exit_code = ReportError("emulate", Error{"--peak-window is an option of --power-sweep"});
      return;
    }
    status.exit_code = Run(*args);
  });
}

}  // namespace wattcut::cli
