#include "wattcut/server/deadline_following.h"

#include <cmath>

#include "wattcut/base/energy_units.h"
#include "wattcut/base/iso_time.h"
#include "wattcut/deadline/job_plans.h"
#include "wattcut/deadline/schedule_following.h"
#include "wattcut/deadline/schedule_json.h"

namespace wattcut::server {
namespace {

Result<std::optional<deadline::StepSeries>> Series(const std::string& text, const std::string& field,
                                                   const deadline::StepSeriesSpec& spec) {
  if (text.empty()) return std::optional<deadline::StepSeries>{};
  Result<deadline::StepSeries> s = deadline::ParseStepSeries(text, "deadline_schedule." + field, spec);
  if (!s.ok()) return Error::InvalidArgument(s.error().message);
  return std::optional<deadline::StepSeries>(std::move(*s));
}

double Done(const DeadlineFollowing& f, int64_t max_step) {
  return static_cast<double>(std::max<int64_t>(0, max_step - f.spec.from_step));
}

}  // namespace

Status ComputeDeadline(DeadlineFollowing& following, const Frontier& frontier, const JobInfo& info, double now_s,
                       std::function<bool()> cancelled) {
  using namespace deadline;
  const DeadlineScheduleSpec& spec = following.spec;
  ScheduleRequest r;
  Result<double> deadline_s = ParseIsoTime(spec.deadline);
  if (!deadline_s.ok()) return Error::InvalidArgument("field 'deadline': " + deadline_s.error().message);
  r.deadline_s = *deadline_s;
  r.start_s = now_s;
  if (!spec.start.empty()) {
    Result<double> start = ParseIsoTime(spec.start);
    if (!start.ok()) return Error::InvalidArgument("field 'start': " + start.error().message);
    r.start_s = *start;
  }
  r.iterations = spec.iterations;
  for (const auto& [text, field, out, series] :
       {std::tuple{&spec.price_csv, "price_csv", &r.price, &kPriceSeries},
        std::tuple{&spec.carbon_csv, "carbon_csv", &r.carbon, &kCarbonSeries}}) {
    auto s = Series(*text, field, *series);
    if (!s.ok()) return s.error();
    *out = std::move(*s);
  }
  auto budget = Series(spec.power_budget_csv, "power_budget_csv", kPowerBudgetSeries);
  if (!budget.ok()) return budget.error();
  r.budget = std::move(*budget);
  const int pipelines = spec.pipelines > 0 ? spec.pipelines : info.dp_degree;
  if (r.budget && r.budget->value_name == "watts_per_gpu") r.budget_gpus = frontier.num_devices() * pipelines;
  r.objective = ObjectiveFor(spec.objective, r.price.has_value(), r.carbon.has_value());
  const BudgetPower budget_power = BudgetPowerFor(spec.budget_power, frontier.points());
  Result<std::vector<JobPlan>> plans =
      JobPlansFromFrontier(frontier.points(), pipelines, budget_power, "the job's frontier");
  if (!plans.ok()) return Error::InvalidArgument(plans.error().message);
  r.plans = std::move(*plans);
  r.cancelled = std::move(cancelled);
  Result<Schedule> schedule = ScheduleToDeadline(r);
  if (!schedule.ok()) {
    if (schedule.error().code == ErrorCode::kAborted) return schedule.error();
    return Error::InvalidArgument(schedule.error().message);
  }
  r.cancelled = nullptr;
  following.request = std::move(r);
  following.schedule = std::move(*schedule);
  following.error.clear();
  return Status::Ok();
}

std::optional<size_t> DeadlineCap(const DeadlineFollowing& following, double now_s) {
  if (!following.schedule) return std::nullopt;
  return deadline::PointAt(*following.schedule, now_s);
}

bool DeadlineNeedsReplan(const DeadlineFollowing& following, int64_t max_step, double now_s) {
  if (!following.schedule) return false;
  const double expected = deadline::IterationsDoneBy(*following.schedule, now_s);
  return std::abs(Done(following, max_step) - expected) > following.spec.replan_margin * following.spec.iterations;
}

DeadlineScheduleSpec ReplanSpec(const DeadlineFollowing& following, int64_t max_step, double now_s) {
  DeadlineScheduleSpec next = following.spec;
  next.iterations = std::max(1.0, following.spec.iterations - Done(following, max_step));
  next.from_step = max_step;
  next.start = FormatTimestamp(now_s);
  ++next.replans;
  return next;
}

StatusDeadlineView DeadlineStatus(const DeadlineFollowing& following, int64_t max_step, double now_s) {
  StatusDeadlineView v;
  v.deadline = following.spec.deadline;
  v.iterations = following.spec.iterations;
  v.done = Done(following, max_step);
  v.replans = following.spec.replans;
  v.error = following.error;
  v.objective = following.spec.objective;
  if (following.schedule) {
    const deadline::Schedule& s = *following.schedule;
    v.objective = deadline::ObjectiveName(s.objective);
    v.point_now = DeadlineCap(following, now_s);
    v.expected = deadline::IterationsDoneBy(s, now_s);
    const deadline::ScheduleTotals by = deadline::TotalsBy(s, now_s);
    auto of = [&](const deadline::ScheduleTotals& t) {
      return s.objective == deadline::Objective::kCost     ? t.cost
             : s.objective == deadline::Objective::kCarbon ? t.carbon_g / 1000
                                                           : t.energy_j / kJoulesPerKwh;
    };
    v.planned_so_far = of(by);
    v.planned_total = of(s.totals);
    v.finish = FormatTimestamp(s.totals.finish_s);
  }
  if (v.objective.empty()) v.objective = "cost";
  return v;
}

nlohmann::json DeadlineJson(const std::string& job_id, const DeadlineFollowing& following, int64_t max_step,
                            double now_s, bool computing) {
  nlohmann::json j = {{"job_id", job_id}, {"spec", following.spec.ToJson()}};
  nlohmann::json f = {{"replans", following.spec.replans},
                      {"from_step", following.spec.from_step},
                      {"done_iterations", Done(following, max_step)}};
  if (following.schedule && following.request) {
    j["schedule"] = deadline::ScheduleJson(*following.schedule, *following.request, nlohmann::json::object());
    f["expected_iterations"] = deadline::IterationsDoneBy(*following.schedule, now_s);
    if (auto p = DeadlineCap(following, now_s)) f["point_now"] = *p;
  } else {
    j["schedule"] = nullptr;
  }
  if (!following.error.empty()) f["error"] = following.error;
  f["computing"] = computing;
  j["following"] = f;
  return j;
}

}  // namespace wattcut::server
