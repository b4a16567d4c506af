// `wattcut plan`: look at the plans of a computed frontier (a `wattcut frontier --out DIR`
// folder, or its frontier.wattcut file).
//
//   wattcut plan show DIR --point N | --time T | --slowdown K | --power-per-gpu W | --peak-power-per-gpu W
//                         [--format json|zeus]
//   wattcut plan list DIR [--all]
//   wattcut plan schedule DIR --iterations N --deadline T --price FILE ... (plan_schedule_command.cc)
//
// `show` prints one plan: the wattcut.frequency_plan/v1 JSON that `--plans json` writes as
// plans/NNNNN.json, or the Zeus PointSolution literal; a generic DAG's frontier (`wattcut
// frontier --dag`) prints wattcut.dag_plan/v1, every operation's knob. The lookups are
// plan/plan_lookup.h's, the same for both.
// `list` prints the frontier's summary and a few rows of its table (every row with --all).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/cli/command.h"
#include "wattcut/plan/dag_frontier_file.h"
#include "wattcut/plan/frontier_file.h"
#include "wattcut/plan/plan_files.h"
#include "wattcut/plan/plan_lookup.h"

namespace wattcut::cli {
namespace {

constexpr size_t kListRows = 10;  // rows `plan list` prints without --all, ends included

struct PlanArgs {
  std::string dir;
  std::optional<int64_t> point;
  std::optional<double> time_s;
  std::optional<double> slowdown;
  std::optional<double> power_per_gpu_w;
  std::optional<double> peak_power_per_gpu_w;
  std::string format = "json";
  bool all = false;
};

int Show(const PlanArgs& args) {
  const std::string name = "plan show";
  PlanQuery query;
  int given = 0;
  if (args.point) query = {PlanQuery::Kind::kPoint, static_cast<double>(*args.point)}, ++given;
  if (args.time_s) query = {PlanQuery::Kind::kIterationTime, *args.time_s}, ++given;
  if (args.slowdown) query = {PlanQuery::Kind::kSlowdown, *args.slowdown}, ++given;
  if (args.power_per_gpu_w) query = {PlanQuery::Kind::kPowerPerGpu, *args.power_per_gpu_w}, ++given;
  if (args.peak_power_per_gpu_w) query = {PlanQuery::Kind::kPeakPowerPerGpu, *args.peak_power_per_gpu_w}, ++given;
  if (given != 1) {
    return ReportError(name, Error{"give exactly one of --point N, --time T, --slowdown K, --power-per-gpu W or "
                                   "--peak-power-per-gpu W (got " +
                                   std::to_string(given) + ")"});
  }
  Result<FrontierFileKind> kind = ReadFrontierFileKind(args.dir);
  if (!kind.ok()) return ReportError(name, kind.error());
  // A point is looked up as the integer given (a double would round the largest ones).
  auto look_up = [&](const DurationFrontier& f) {
    return args.point ? PointByIndex(f, *args.point) : LookUpPlan(f, query);
  };
  if (*kind == FrontierFileKind::kDag) {
    if (args.format == "zeus") {
      return ReportError(name, Error{args.dir + ": a generic DAG's plan has no Zeus form (Zeus plans pipelines); "
                                                "use --format json"});
    }
    Result<DagFrontier> dag = ReadDagFrontierFile(args.dir);
    if (!dag.ok()) return ReportError(name, dag.error());
    Result<size_t> index = look_up(*dag);
    if (!index.ok()) return ReportError(name, index.error());
    std::cout << DagPlanJson(*dag, *index);
    return 0;
  }
  Result<Frontier> frontier = ReadFrontierFile(args.dir);
  if (!frontier.ok()) return ReportError(name, frontier.error());
  Result<size_t> index = look_up(*frontier);
  if (!index.ok()) return ReportError(name, index.error());
  if (args.format == "zeus") {
    std::cout << ZeusPlanLiteral(frontier->PlanAt(*index));
  } else {
    std::cout << PlanJson(*frontier, *index);
  }
  return 0;
}

// One table row, columns as in the header List prints.
void PrintRow(const DurationFrontier& frontier, size_t i, const char* label) {
  const FrontierPoint& p = frontier.points()[i];
  const bool devices = frontier.num_devices() > 0;
  char peak[64] = "-";
  char peak_per_gpu[64] = "-";
  char average_per_gpu[64] = "-";
  if (p.peak_1s_power_w) {
    std::snprintf(peak, sizeof(peak), "%.2f", *p.peak_1s_power_w);
    if (const auto per_gpu = PeakPowerPerGpuW(frontier, i))
      std::snprintf(peak_per_gpu, sizeof(peak_per_gpu), "%.2f", *per_gpu);
  }
  if (devices) std::snprintf(average_per_gpu, sizeof(average_per_gpu), "%.2f", AveragePowerPerGpuW(frontier, i));
  char row[320];
  std::snprintf(row, sizeof(row), "%-6s %8zu %10.4f %12.2f %14.2f %14s %14s %14s\n", label, i, p.time_s, p.energy_j,
                AveragePowerW(p), average_per_gpu, peak, peak_per_gpu);
  std::cout << row;
}

// The summary and rows of any frontier; `what` describes it ("8 stages, 96 computations, ...").
int PrintList(const PlanArgs& args, const DurationFrontier& f, const std::string& what) {
  const size_t points = f.points().size();
  const size_t fastest = f.fastest_index();
  const size_t cheapest = f.min_energy_index();
  std::cout << "frontier: " << points << " points, " << what << "\n"
            << "  T_max  " << FixedDecimals(f.points().front().time_s, 4) << " s  "
            << FixedDecimals(f.points().front().energy_j, 2) << " J  (plan 0)\n"
            << "  T*     " << FixedDecimals(f.points()[cheapest].time_s, 4) << " s  "
            << FixedDecimals(f.points()[cheapest].energy_j, 2) << " J  (plan " << cheapest << ")\n"
            << "  T_min  " << FixedDecimals(f.points()[fastest].time_s, 4) << " s  "
            << FixedDecimals(f.points()[fastest].energy_j, 2) << " J  (plan " << fastest << ")\n"
            << "power on average: " << FixedDecimals(AveragePowerW(f.points().front()), 2) << " W (T_max) to "
            << FixedDecimals(AveragePowerW(f.points()[fastest]), 2) << " W (T_min)";
  if (f.num_devices() > 0) {
    std::cout << ", per GPU " << FixedDecimals(AveragePowerPerGpuW(f, 0), 2) << " W to "
              << FixedDecimals(AveragePowerPerGpuW(f, fastest), 2) << " W";
  } else {
    std::cout << "; no power per GPU (the DAG names no devices)";
  }
  if (!f.points().front().peak_1s_power_w) std::cout << "; peak 1-s power not in this file";
  char header[320];
  std::snprintf(header, sizeof(header), "%-6s %8s %10s %12s %14s %14s %14s %14s\n", "", "plan", "time_s", "energy_j",
                "avg_power_w", "avg_w_per_gpu", "peak_1s_w", "peak_1s_w_gpu");
  std::cout << "\n\n" << header;
  auto label = [&](size_t i) -> const char* {
    if (i == fastest) return "T_min";
    if (i == cheapest) return "T*";
    if (i == 0) return "T_max";
    return "";
  };
  if (args.all || points <= kListRows) {
    for (size_t i = 0; i < points; ++i) PrintRow(f, i, label(i));
    return 0;
  }
  // Evenly spaced rows with T_max, T* and T_min among them, in point order.
  std::vector<size_t> rows;
  for (size_t k = 0; k < kListRows - 1; ++k) rows.push_back(k * (points - 1) / (kListRows - 1));
  rows.push_back(fastest);
  rows.push_back(cheapest);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  for (size_t i : rows) PrintRow(f, i, label(i));
  std::cout << "(" << rows.size() << " of " << points << " rows; --all prints every one)\n";
  return 0;
}

int List(const PlanArgs& args) {
  const std::string name = "plan list";
  Result<FrontierFileKind> kind = ReadFrontierFileKind(args.dir);
  if (!kind.ok()) return ReportError(name, kind.error());
  std::ostringstream what;
  if (*kind == FrontierFileKind::kDag) {
    Result<DagFrontier> dag = ReadDagFrontierFile(args.dir);
    if (!dag.ok()) return ReportError(name, dag.error());
    what << "a generic DAG of " << dag->num_computations() << " operations on " << dag->num_devices()
         << " devices, unit time " << dag->setup().unit_time_s << " s, blocking power " << dag->blocking_power_w()
         << " W in all";
    return PrintList(args, *dag, what.str());
  }
  Result<Frontier> frontier = ReadFrontierFile(args.dir);
  if (!frontier.ok()) return ReportError(name, frontier.error());
  what << frontier->num_stages() << " stages, " << frontier->num_computations() << " computations, unit time "
       << frontier->setup().unit_time_s << " s, blocking power " << frontier->setup().p2p_power_w << " W";
  return PrintList(args, *frontier, what.str());
}

}  // namespace

void AddPlanCommand(CLI::App& app, CommandStatus& status) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* plan = app.add_subcommand("plan", "Look up the plans of a computed frontier: show, list, schedule");
  plan->require_subcommand(1);

  CLI::App* show = plan->add_subcommand("show", "Print one plan of a frontier (JSON or the Zeus literal)");
  show->add_option("DIR", args->dir, "A `wattcut frontier --out` folder or its frontier.wattcut file")->required();
  show->add_option("--point", args->point, "The plan with this index (frontier.csv's plan column)");
  show->add_option("--time", args->time_s, "The least-energy plan no slower than T seconds (as the server picks)");
  show->add_option("--slowdown", args->slowdown, "The least-energy plan no slower than K x T_min (K >= 1)");
  show->add_option("--power-per-gpu", args->power_per_gpu_w,
                   "The fastest plan whose average power per GPU is at most W watts");
  show->add_option("--peak-power-per-gpu", args->peak_power_per_gpu_w,
                   "The fastest plan whose peak 1-s power per GPU is at most W watts");
  show->add_option("--format", args->format, "json (wattcut.frequency_plan/v1) or zeus (PointSolution literal)")
      ->check(CLI::IsMember({"json", "zeus"}))
      ->capture_default_str();
  show->callback([args, &status] { status.exit_code = Show(*args); });

  CLI::App* list = plan->add_subcommand("list", "Print a frontier's summary and a few rows of its table");
  list->add_option("DIR", args->dir, "A `wattcut frontier --out` folder or its frontier.wattcut file")->required();
  list->add_flag("--all", args->all, "Print every point's row");
  list->callback([args, &status] { status.exit_code = List(*args); });

  AddPlanScheduleCommand(*plan, status);
}

}  // namespace wattcut::cli
