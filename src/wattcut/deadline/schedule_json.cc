#include "wattcut/deadline/schedule_json.h"

#include <cmath>

#include "wattcut/base/energy_units.h"
#include "wattcut/base/iso_time.h"

namespace wattcut::deadline {
namespace {

nlohmann::json Number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json Totals(const ScheduleTotals& t) {
  return {{"finish", std::isfinite(t.finish_s) ? nlohmann::json(FormatTimestamp(t.finish_s)) : nlohmann::json(nullptr)},
          {"finish_s", Number(t.finish_s)},
          {"iterations", t.iterations},
          {"energy_kwh", t.energy_j / kJoulesPerKwh},
          {"cost", Number(t.cost)},
          {"carbon_kg", Number(t.carbon_g / 1000)}};
}

double ObjectiveOf(const ScheduleTotals& t, Objective o) {
  return o == Objective::kCost ? t.cost : o == Objective::kCarbon ? t.carbon_g : t.energy_j;
}

nlohmann::json Saving(const Schedule& s, const Baseline& b) {
  if (!b.available) return nullptr;
  const double base = ObjectiveOf(b.totals, s.objective);
  if (!(base > 0)) return nullptr;
  return 1 - ObjectiveOf(s.totals, s.objective) / base;
}

nlohmann::json Intervals(const std::vector<ScheduledInterval>& intervals, double iterations) {
  nlohmann::json out = nlohmann::json::array();
  double done = 0;
  for (const ScheduledInterval& k : intervals) {
    nlohmann::json plans = nlohmann::json::array();
    for (const PlanShare& p : k.shares) {
      plans.push_back({{"point", p.point},
                       {"seconds", p.seconds},
                       {"iterations", p.iterations},
                       {"iterations_per_s", p.seconds > 0 ? p.iterations / p.seconds : 0.0},
                       {"power_w", p.power_w}});
    }
    done += k.iterations;
    out.push_back({{"start", FormatTimestamp(k.start_s)},
                   {"start_s", k.start_s},
                   {"end", FormatTimestamp(k.end_s)},
                   {"end_s", k.end_s},
                   {"price", Number(k.price)},
                   {"carbon", Number(k.carbon)},
                   {"budget_w", Number(k.budget_w)},
                   {"plans", plans},
                   {"iterations", k.iterations},
                   {"energy_kwh", k.energy_j / kJoulesPerKwh},
                   {"cost", Number(k.cost)},
                   {"carbon_kg", Number(k.carbon_g / 1000)},
                   {"progress", std::min(1.0, done / iterations)}});
  }
  return out;
}

nlohmann::json BaselineJson(const Baseline& b) {
  nlohmann::json j = Totals(b.totals);
  j["available"] = b.available;
  if (!b.available) j["note"] = b.note;
  if (b.available && !b.intervals.empty() && !b.intervals.front().shares.empty()) {
    j["point"] = b.intervals.front().shares.front().point;
  }
  return j;
}

}  // namespace

nlohmann::json ScheduleJson(const Schedule& schedule, const ScheduleRequest& request, const nlohmann::json& inputs) {
  return {{"format", kScheduleFormat},
          {"objective", ObjectiveName(schedule.objective)},
          {"start", FormatTimestamp(request.start_s)},
          {"start_s", request.start_s},
          {"deadline", FormatTimestamp(request.deadline_s)},
          {"deadline_s", request.deadline_s},
          {"iterations", request.iterations},
          {"inputs", inputs},
          {"totals", Totals(schedule.totals)},
          {"baselines",
           {{"fastest", BaselineJson(schedule.fastest)}, {"least_energy", BaselineJson(schedule.least_energy)}}},
          {"saving",
           {{"vs_fastest", Saving(schedule, schedule.fastest)},
            {"vs_least_energy", Saving(schedule, schedule.least_energy)}}},
          {"intervals", Intervals(schedule.intervals, request.iterations)},
          {"notes", schedule.notes}};
}

}  // namespace wattcut::deadline
