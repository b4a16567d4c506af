// `wattcut schedule`: the order each pipeline device runs its computations in under a
// schedule, in the notation F3 / B0.1 / W2 (dag/schedule_notation.h), and optionally the
// timeline of the frontier's fastest plan as an SVG (the pictures in docs/planner.md).
#include <fstream>
#include <iostream>

#include "wattcut/cli/command.h"
#include "wattcut/cli/planner_arguments.h"
#include "wattcut/dag/schedule_notation.h"
#include "wattcut/emulate/emulation_charts.h"
#include "wattcut/plan/planner.h"

namespace wattcut::cli {
namespace {

constexpr int kDefaultMicrobatches = 8;

struct ScheduleArgs {
  PlannerArguments planner;
  std::string svg_path;
};

int Run(const ScheduleArgs& args) {
  const std::string name = "schedule";
  Result<PlanningInput> input = ResolvePlannerArguments(args.planner, kDefaultMicrobatches);
  if (!input.ok()) return ReportError(name, input.error());
  for (const DroppedFrequency& dropped : input->dropped) ReportWarning(name, DroppedFrequencyMessage(dropped));
  for (const std::string& note : input->notes) ReportWarning(name, note);
  const PlannerOptions& options = input->options;
  const int devices = PipelineDevices(input->profile, options);
  // The planning problem checks the shape against the profile and the limits first.
  Result<PlanningProblem> problem = BuildPlanningProblem(input->profile, options);
  if (!problem.ok()) return ReportError(name, problem.error());
  const PipelineSchedule& schedule = problem->setup.schedule;
  std::string title = std::string(PipelineScheduleName(options.schedule)) + ", " + std::to_string(devices) +
                      " devices" +
                      (options.virtual_stages > 1 ? " x " + std::to_string(options.virtual_stages) + " chunks" : "") +
                      ", " + std::to_string(options.num_microbatches) + " microbatches";
  if (!args.svg_path.empty()) {
    Result<Frontier> frontier = ComputeFrontier(input->profile, options);
    if (!frontier.ok()) return ReportError(name, frontier.error());
    std::ofstream out(args.svg_path, std::ios::binary | std::ios::trunc);
    out << PlanTimelineSvg(*frontier, frontier->fastest_index(), 1.0, title + ": fastest plan");
    out.close();
    if (!out) return ReportError(name, Error{args.svg_path + ": cannot write the timeline"});
  }
  std::cout << title << " (F forward, B backward" << (SplitsBackward(options.schedule) ? " input gradient" : "")
            << (SplitsBackward(options.schedule) ? ", W weight gradient" : "")
            << (options.virtual_stages > 1 ? "; .C the device's chunk C, profile stage C x devices + device" : "")
            << ")\n";
  for (size_t d = 0; d < schedule.size(); ++d) {
    std::cout << "device " << d << ": " << DeviceOrderNotation(schedule[d]) << "\n";
  }
  if (!args.svg_path.empty()) std::cout << "wrote " << args.svg_path << "\n";
  return 0;
}

}  // namespace

void AddScheduleCommand(CLI::App& app, CommandStatus& status) {
  auto args = std::make_shared<ScheduleArgs>();
  CLI::App* sub = app.add_subcommand(
      "schedule", "Print the order each pipeline device runs its computations in, and draw its timeline");
  AddPlannerOptions(*sub, args->planner, kDefaultMicrobatches);
  sub->add_option("--svg", args->svg_path, "Write the timeline of the frontier's fastest plan to this SVG file");
  sub->callback([args, &status] { status.exit_code = Run(*args); });
}

}  // namespace wattcut::cli
