// `wattcut plan schedule`: which frontier point a training run uses hour by hour to finish its
// iterations by a deadline at the least cost, carbon or energy (deadline/deadline_scheduler.h):
//
//   wattcut plan schedule DIR --iterations N --deadline 2026-12-09T00:00Z [--start now|TIME]
//       --price prices.csv [--carbon carbon.csv] [--objective cost|carbon|energy]
//       [--power-budget budget.csv] [--budget-power peak|average] [--pipelines P] --out OUT
//
// DIR is a `wattcut frontier --out` folder (or its frontier.wattcut, or a DAG's). OUT is a folder,
// written all at once as every --out is: schedule.json (deadline/schedule_json.h),
// schedule_power.svg and schedule_progress.svg. docs/deadline.md.
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>

#include "wattcut/base/energy_units.h"
#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/iso_time.h"
#include "wattcut/cli/command.h"
#include "wattcut/cli/output_directory.h"
#include "wattcut/deadline/deadline_scheduler.h"
#include "wattcut/deadline/job_plans.h"
#include "wattcut/deadline/schedule_charts.h"
#include "wattcut/deadline/schedule_json.h"
#include "wattcut/plan/dag_frontier_file.h"
#include "wattcut/plan/frontier_file.h"

namespace wattcut::cli {
namespace {

constexpr int kMaxPipelines = 100'000;

struct PlanScheduleArgs {
  std::string dir;
  int64_t iterations = 0;
  std::string deadline;
  std::string start = "now";
  std::string price, carbon, budget;
  std::string objective;
  std::string budget_power;
  int pipelines = 1;
  std::string out;
  bool overwrite = false;
};

Result<double> ReadTimeOption(const std::string& option, const std::string& text) {
  if (text == "now") return static_cast<double>(std::time(nullptr));
  Result<double> t = ParseIsoTimeWithZone(text);
  if (!t.ok()) return Error{option + ": " + t.error().message};
  return *t;
}

// The frontier's points and GPUs per pipeline, pipeline or DAG.
Result<std::pair<std::vector<FrontierPoint>, int>> ReadPoints(const std::string& dir) {
  Result<FrontierFileKind> kind = ReadFrontierFileKind(dir);
  if (!kind.ok()) return kind.error();
  if (*kind == FrontierFileKind::kDag) {
    Result<DagFrontier> dag = ReadDagFrontierFile(dir);
    if (!dag.ok()) return dag.error();
    return std::make_pair(dag->points(), dag->num_devices());
  }
  Result<Frontier> frontier = ReadFrontierFile(dir);
  if (!frontier.ok()) return frontier.error();
  return std::make_pair(frontier->points(), frontier->num_devices());
}

std::string Money(double v) { return std::isfinite(v) ? FixedDecimals(v, 2) : "-"; }

int Run(const PlanScheduleArgs& args) {
  const std::string name = "plan schedule";
  using namespace deadline;
  if (args.pipelines < 1 || args.pipelines > kMaxPipelines) {
    return ReportError(name, Error{"--pipelines: expected 1 to " + std::to_string(kMaxPipelines) +
                                   " data-parallel pipelines, got " + std::to_string(args.pipelines)});
  }
  ScheduleRequest r;
  Result<double> start = ReadTimeOption("--start", args.start);
  if (!start.ok()) return ReportError(name, start.error());
  Result<double> deadline_s = ReadTimeOption("--deadline", args.deadline);
  if (!deadline_s.ok()) return ReportError(name, deadline_s.error());
  r.start_s = *start;
  r.deadline_s = *deadline_s;
  r.iterations = static_cast<double>(args.iterations);
  if (!args.price.empty()) {
    Result<StepSeries> s = ReadStepSeries(args.price, kPriceSeries);
    if (!s.ok()) return ReportError(name, s.error());
    r.price = std::move(*s);
  }
  if (!args.carbon.empty()) {
    Result<StepSeries> s = ReadStepSeries(args.carbon, kCarbonSeries);
    if (!s.ok()) return ReportError(name, s.error());
    r.carbon = std::move(*s);
  }
  r.objective = ObjectiveFor(args.objective, r.price.has_value(), r.carbon.has_value());
  // Check --out before the work.
  Result<OutputDirectory> out = OutputDirectory::Create(args.out, args.overwrite);
  if (!out.ok()) return ReportError(name, out.error());

  Result<std::pair<std::vector<FrontierPoint>, int>> points = ReadPoints(args.dir);
  if (!points.ok()) return ReportError(name, points.error());
  const auto& [frontier_points, gpus_per_pipeline] = *points;
  const int gpus = gpus_per_pipeline * args.pipelines;
  const BudgetPower budget_power = BudgetPowerFor(args.budget_power, frontier_points);
  Result<std::vector<JobPlan>> plans = JobPlansFromFrontier(frontier_points, args.pipelines, budget_power, args.dir);
  if (!plans.ok()) return ReportError(name, plans.error());
  r.plans = std::move(*plans);
  if (!args.budget.empty()) {
    Result<StepSeries> s = ReadStepSeries(args.budget, kPowerBudgetSeries);
    if (!s.ok()) return ReportError(name, s.error());
    if (s->value_name == "watts_per_gpu") {
      if (gpus <= 0) {
        return ReportError(name, Error{args.budget + ":1: column 'watts_per_gpu': the frontier names no devices to "
                                                     "multiply a per-GPU budget by; give 'watts' for the job"});
      }
      r.budget_gpus = gpus;
    }
    r.budget = std::move(*s);
  }
  const ScheduleRequest request = r;
  Result<Schedule> schedule = ScheduleToDeadline(std::move(r));
  if (!schedule.ok()) return ReportError(name, schedule.error());

  nlohmann::json inputs = {
      {"frontier", args.dir},
      {"points", frontier_points.size()},
      {"pipelines", args.pipelines},
      {"gpus", gpus},
      {"budget_compared_with", budget_power == BudgetPower::kPeak ? "peak_1s_power" : "average_power"}};
  if (request.price) inputs["price"] = {{"file", args.price}, {"column", request.price->value_name}};
  if (request.carbon) inputs["carbon"] = {{"file", args.carbon}, {"column", request.carbon->value_name}};
  if (request.budget) inputs["power_budget"] = {{"file", args.budget}, {"column", request.budget->value_name}};
  const nlohmann::json doc = ScheduleJson(*schedule, request, inputs);
  if (Status s = out->Write("schedule.json", doc.dump(2) + "\n"); !s.ok()) return ReportError(name, s.error());
  if (Status s = out->Write("schedule_power.svg", SchedulePowerChart(*schedule, request).ToSvg()); !s.ok()) {
    return ReportError(name, s.error());
  }
  if (Status s = out->Write("schedule_progress.svg", ScheduleProgressChart(*schedule, request).ToSvg()); !s.ok()) {
    return ReportError(name, s.error());
  }
  if (Status s = out->Commit(); !s.ok()) return ReportError(name, s.error());

  for (const std::string& note : schedule->notes) ReportWarning(name, note);
  const Schedule& s = *schedule;
  auto line = [&](const char* label, const ScheduleTotals& t) {
    std::cout << "  " << label << "finish " << FormatTimestamp(t.finish_s) << ", "
              << FixedDecimals(t.energy_j / kJoulesPerKwh, 1) << " kWh, cost " << Money(t.cost) << ", carbon "
              << (std::isfinite(t.carbon_g) ? FixedDecimals(t.carbon_g / 1000, 1) + " kg" : "-") << "\n";
  };
  std::cout << "schedule (" << ObjectiveName(s.objective) << ") of " << args.iterations << " iterations by "
            << FormatTimestamp(request.deadline_s) << " over " << s.intervals.size() << " intervals, " << gpus
            << " GPUs:\n";
  line("schedule:     ", s.totals);
  for (const Baseline* b : {&s.fastest, &s.least_energy}) {
    const std::string label = b->name == "fastest" ? "fastest:      " : "least-energy: ";
    if (!b->available) {
      std::cout << "  " << label << "not available: " << b->note << "\n";
      continue;
    }
    line(label.c_str(), b->totals);
  }
  for (const auto& [key, label] :
       {std::pair{"vs_fastest", "the fastest plan"}, std::pair{"vs_least_energy", "the least-energy plan"}}) {
    const nlohmann::json& v = doc["saving"][key];
    if (v.is_number()) {
      std::cout << "  " << ObjectiveName(s.objective) << " " << FixedDecimals(100 * v.get<double>(), 2) << " % below "
                << label << " all along\n";
    }
  }
  std::cout << "wrote " << DisplayPath(args.out) << "/schedule.json, schedule_power.svg, schedule_progress.svg\n";
  return 0;
}

}  // namespace

void AddPlanScheduleCommand(CLI::App& plan, CommandStatus& status) {
  auto args = std::make_shared<PlanScheduleArgs>();
  CLI::App* c = plan.add_subcommand(
      "schedule", "Choose the frontier point hour by hour to finish by a deadline at the least cost, carbon or energy");
  c->add_option("DIR", args->dir, "A `wattcut frontier --out` folder or its frontier.wattcut file")->required();
  c->add_option("--iterations", args->iterations, "Iterations the run still has to do")
      ->required()
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000'000'000}));
  c->add_option("--deadline", args->deadline, "When the last iteration must be done (ISO 8601, e.g. 2026-12-09T00:00Z)")
      ->required();
  c->add_option("--start", args->start, "When the run starts: now, or an ISO 8601 time")->capture_default_str();
  c->add_option("--price", args->price, "CSV time,VALUE: the electricity price per kWh from each time on");
  c->add_option("--carbon", args->carbon, "CSV time,VALUE: the grid's carbon intensity (gCO2/kWh) from each time on");
  c->add_option("--objective", args->objective,
                "cost (needs --price), carbon (needs --carbon) or energy; default: cost with --price, else carbon "
                "with --carbon, else energy")
      ->check(CLI::IsMember({"cost", "carbon", "energy"}));
  c->add_option("--power-budget", args->budget,
                "CSV time,watts (the job's) or time,watts_per_gpu: the most the job may draw from each time on");
  c->add_option("--budget-power", args->budget_power,
                "What a budget is compared with: peak (each plan's peak 1-s power; the default when the frontier has "
                "it) or average")
      ->check(CLI::IsMember({"peak", "average"}));
  c->add_option("--pipelines", args->pipelines, "Data-parallel pipelines of the job (its power is theirs together)")
      ->capture_default_str();
  c->add_option("--out", args->out, "Output folder: schedule.json and two SVGs")->required();
  c->add_flag("--overwrite", args->overwrite, "Replace OUT if it exists and is not empty");
  c->callback([args, &status] { status.exit_code = Run(*args); });
}

}  // namespace wattcut::cli
