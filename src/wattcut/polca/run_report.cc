#include "wattcut/polca/run_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/general_text.h"
#include "wattcut/polca/row_charts.h"
#include "wattcut/polca/row_load.h"

namespace wattcut::polca {
namespace {

using nlohmann::json;

Status EnsureDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{dir + ": cannot create output folder: " + ec.message()};
  return Status::Ok();
}

Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error{path + ": cannot open file for writing"};
  out << text;
  out.close();
  if (!out) return Error{path + ": write error"};
  return Status::Ok();
}

std::string Percent(double fraction, int decimals = 1) { return FixedDecimals(100 * fraction, decimals) + " %"; }

json PriorityJson(const PriorityMetrics& m) {
  return {{"servers", m.servers},
          {"completed_requests", m.completed},
          {"latency_p50_s", m.latency_p50_s},
          {"latency_p99_s", m.latency_p99_s},
          {"generated_tokens", m.generated_tokens},
          {"tokens_per_s", m.tokens_per_s},
          {"busy_server_s", m.busy_server_s}};
}

json ImpactJson(const PriorityImpact& i) {
  return {{"p50_latency_impact", i.p50_latency},
          {"p99_latency_impact", i.p99_latency},
          {"throughput_change", i.throughput}};
}

json RunJson(const RowRunResult& r) {
  return {{"policy", PolicyName(r.policy)},
          {"servers", r.servers},
          {"brake_events", r.brake_events},
          {"brake_active_s", r.brake_active_s},
          {"time_in_state_s",
           {{"normal", r.level_s[0]}, {"t1", r.level_s[1]}, {"t2-low", r.level_s[2]}, {"t2-high", r.level_s[3]}}},
          {"row_power_fraction",
           {{"max", r.power_max}, {"p99", r.power_p99}, {"p50", r.power_p50}, {"mean", r.power_mean}}},
          {"seconds_above_budget", r.seconds_above_budget},
          {"energy_kwh", r.energy_kwh},
          {"energy_per_token_j", EnergyPerServedTokenJ(r)},
          {"arrivals", r.arrivals},
          {"unfinished_requests", r.unfinished},
          {"high_priority", PriorityJson(r.high)},
          {"low_priority", PriorityJson(r.low)}};
}

// RunJson, with the training servers' metrics when the row trains (`impact` against the
// unmanaged run; none for the unmanaged run itself).
json RunJsonWithTraining(const RowRunResult& r, const RunImpact* impact) {
  json j = RunJson(r);
  if (r.training.servers == 0) return j;
  const TrainingMetrics& t = r.training;
  j["training_control"] = TrainingControlName(r.training_control);
  j["training"] = {{"servers", t.servers},
                   {"iterations", t.iterations},
                   {"plan_changes", t.plan_changes},
                   {"limited_server_s", t.limited_server_s},
                   {"targeted_server_s", t.targeted_server_s},
                   {"target_not_met_s", t.target_not_met_s}};
  if (impact != nullptr) j["training"]["throughput_change"] = impact->training_throughput;
  return j;
}

// The trace: its file, requests and span; for a streamed one (--time-of-day trace) also where its
// timeline starts and its busiest hour, which set the row's rate.
json TraceJson(const RunContext& c) {
  if (c.timeline == nullptr) {
    return {{"path", c.trace->name()}, {"requests", c.trace->requests().size()}, {"span_s", c.trace->span_s()}};
  }
  const TraceTimeline& t = *c.timeline;
  return {{"path", t.path},
          {"requests", t.requests},
          {"span_s", t.span_s},
          {"start", t.start_timestamp},
          {"busiest_hour", t.busiest_hour()},
          {"busiest_hour_requests", t.busiest_hour_requests()}};
}

// The load at the peak in both terms (row_load.h): requests per second per serving server, and the
// share of a server's capacity they bring.
json LoadJson(const RunContext& c) {
  const RowLoad load = LoadOf(*c.config, c.timeline != nullptr ? WorkOf(*c.timeline) : WorkOf(*c.trace));
  return {{"peak_requests_per_server_s", load.peak_requests_per_server_s},
          {"peak_utilization", load.peak_utilization},
          {"mean_request_work_s", load.mean_request_work_s},
          {"stated_by", load.stated_by_work ? "workload.peak_utilization" : "workload.peak_requests_per_server_s"}};
}

json ContextJson(const RunContext& c) {
  return {{"command", c.command},
          {"config", c.config->source},
          {"gpu", c.config->gpu.name},
          {"model", c.config->service.model},
          {"trace", TraceJson(c)},
          {"time_of_day", TimeOfDayName(c.time_of_day)},
          {"seed", c.seed},
          {"baseline_servers", c.config->row.baseline_servers},
          {"row_budget_w", c.config->row_budget_w()},
          {"load", LoadJson(c)},
          {"slos",
           {{"high_p50_latency_impact_below", 0.01},
            {"high_p99_latency_impact_below", 0.05},
            {"low_p50_latency_impact_below", 0.05},
            {"low_p99_latency_impact_below", 0.50}}},
          {"wall_s", c.wall_s}};
}

json ContextJsonWithTraining(const RunContext& c) {
  json j = ContextJson(c);
  if (c.training_job == nullptr || c.config->row.training_share == 0) return j;
  const TrainingJob& job = *c.training_job;
  json targets = json::array();
  for (size_t k = 0; k < job.targets_w.size(); ++k) {
    const TrainingTimeline& plan = job.plans[job.target_plan[k]];
    targets.push_back({{"peak_power_per_gpu_w", job.targets_w[k]},
                       {"plan", plan.name},
                       {"met", static_cast<bool>(job.target_met[k])},
                       {"plan_peak_power_per_gpu_w", plan.peak_power_per_gpu_w},
                       {"slowdown", plan.iteration_s() / job.all_max.iteration_s()}});
  }
  j["training_job"] = {{"description", job.description},
                       {"training_share", c.config->row.training_share},
                       {"all_max_iteration_s", job.all_max.iteration_s()},
                       {"all_max_server_w", job.all_max.average_server_w()},
                       {"all_max_peak_power_per_gpu_w", job.all_max.peak_power_per_gpu_w},
                       {"targets", targets}};
  return j;
}

const std::string kRunCsvHeader =
    "policy,servers,added_fraction,brake_events,brake_active_s,normal_s,t1_s,t2_low_s,t2_high_s,power_max,power_p99,"
    "power_mean,energy_kwh,energy_per_token_j,high_p50_impact,high_p99_impact,high_throughput_change,low_p50_impact,"
    "low_p99_impact,low_throughput_change,energy_per_token_change,meets_slos\n";
// With training servers, these columns follow meets_slos.
const std::string kTrainingCsvColumns =
    ",training_control,training_servers,training_iterations,training_throughput_change,training_plan_changes";

bool SweepTrains(const SweepResult& sweep) {
  return std::any_of(sweep.points.begin(), sweep.points.end(),
                     [](const SweepPoint& p) { return p.run.training.servers > 0; });
}

std::string RunCsvHeader(bool trains) {
  return trains ? kRunCsvHeader.substr(0, kRunCsvHeader.size() - 1) + kTrainingCsvColumns + "\n" : kRunCsvHeader;
}

std::string RunCsvRow(const RowRunResult& r, double added, const RunImpact& i, bool meets, bool trains) {
  std::string s = PolicyName(r.policy) + "," + std::to_string(r.servers) + "," + GeneralText(added) + "," +
                  std::to_string(r.brake_events) + "," + GeneralText(r.brake_active_s);
  for (double v : r.level_s) s += "," + GeneralText(v);
  s += "," + GeneralText(r.power_max) + "," + GeneralText(r.power_p99) + "," + GeneralText(r.power_mean) + "," +
       GeneralText(r.energy_kwh) + "," + GeneralText(EnergyPerServedTokenJ(r));
  for (double v : {i.high.p50_latency, i.high.p99_latency, i.high.throughput, i.low.p50_latency, i.low.p99_latency,
                   i.low.throughput, i.energy_per_token}) {
    s += "," + GeneralText(v);
  }
  s += meets ? ",true" : ",false";
  if (trains) {
    s += "," + TrainingControlName(r.training_control) + "," + std::to_string(r.training.servers) + "," +
         GeneralText(r.training.iterations) + "," + GeneralText(i.training_throughput) + "," +
         std::to_string(r.training.plan_changes);
  }
  return s + "\n";
}

}  // namespace

Status WriteRunReport(const std::string& dir, const RunContext& context, const RowRunResult& run,
                      const RowRunResult& reference) {
  Status st = EnsureDir(dir);
  if (!st.ok()) return st;
  const RunImpact impact = CompareRuns(run, reference);
  const double baseline = context.config->row.baseline_servers;
  const double added = run.servers / baseline - 1;
  json summary = ContextJsonWithTraining(context);
  summary["duration_s"] = run.duration_s;
  summary["added_fraction"] = added;
  summary["run"] = RunJsonWithTraining(run, &impact);
  summary["run"]["high_priority"].update(ImpactJson(impact.high));
  summary["run"]["low_priority"].update(ImpactJson(impact.low));
  summary["run"]["energy_per_token_change"] = impact.energy_per_token;
  summary["unconstrained"] = RunJsonWithTraining(reference, nullptr);
  summary["meets_slos"] = MeetsSlos(impact);
  summary["slo_verdict"] = SloVerdictName(JudgeSlos(impact));
  summary["slo_verdict_text"] = SloVerdictText(impact);
  summary["simulated_s_per_wall_s"] = context.wall_s > 0 ? 2 * run.duration_s / context.wall_s : 0;
  st = WriteText(dir + "/summary.json", summary.dump(2) + "\n");
  const bool trains = run.training.servers > 0;
  if (st.ok())
    st = WriteText(dir + "/run.csv", RunCsvHeader(trains) + RunCsvRow(run, added, impact, MeetsSlos(impact), trains));
  if (st.ok()) st = WriteText(dir + "/config.conf", FormatConfig(*context.config));
  if (st.ok()) {
    const double period = context.config->control.telemetry_period_s;
    const size_t per_minute = std::max<size_t>(1, static_cast<size_t>(std::lround(60 / period)));
    std::string csv = "minute_end_s,power_mean,power_max,unconstrained_mean,unconstrained_max\n";
    for (size_t i = 0; i < run.power_samples.size(); i += per_minute) {
      auto stats = [&](const std::vector<float>& v) {
        double sum = 0, mx = 0;
        size_t end = std::min(v.size(), i + per_minute);
        for (size_t k = i; k < end; ++k) {
          sum += v[k];
          mx = std::max(mx, static_cast<double>(v[k]));
        }
        return std::pair{end > i ? sum / static_cast<double>(end - i) : 0.0, mx};
      };
      auto [mean, mx] = stats(run.power_samples);
      auto [rmean, rmx] = stats(reference.power_samples);
      csv += GeneralText(static_cast<double>(std::min(run.power_samples.size(), i + per_minute)) * period) + "," +
             GeneralText(mean) + "," + GeneralText(mx) + "," + GeneralText(rmean) + "," + GeneralText(rmx) + "\n";
    }
    st = WriteText(dir + "/row_power.csv", csv);
  }
  if (st.ok()) st = WriteText(dir + "/row_power.svg", RowPowerChartSvg(*context.config, run, reference));
  if (st.ok()) st = WriteText(dir + "/power_cdf.svg", PowerCdfChartSvg(*context.config, run, reference));
  return st;
}

std::string SweepMarkdown(const SweepResult& sweep) {
  const bool trains = SweepTrains(sweep);
  std::string md =
      "| added | servers | policy | brake events | time above T1 | high P50 / P99 impact | low P50 / P99 impact | "
      "low throughput | energy per token | " +
      std::string(trains ? "training servers | training throughput | " : "") +
      "holds |\n|---|---|---|---|---|---|---|---|---|" + (trains ? "---|---|" : "") + "---|\n";
  for (const SweepPoint& p : sweep.points) {
    const RowRunResult& r = p.run;
    double above = (r.level_s[1] + r.level_s[2] + r.level_s[3]) / r.duration_s;
    md += "| +" + FixedDecimals(100 * p.added_fraction, 0) + " % | " + std::to_string(p.servers) + " | " + RunLabel(r) +
          " | " + std::to_string(r.brake_events) + " | " +
          (r.policy == PolicyKind::kBrakeOnly ? std::string("-") : Percent(above, 0)) + " | " +
          Percent(p.impact.high.p50_latency) + " / " + Percent(p.impact.high.p99_latency) + " | " +
          Percent(p.impact.low.p50_latency) + " / " + Percent(p.impact.low.p99_latency) + " | " +
          Percent(p.impact.low.throughput, 2) + " | " + Percent(p.impact.energy_per_token, 1) + " | " +
          (trains ? std::to_string(r.training.servers) + " | " + Percent(p.impact.training_throughput, 2) + " | "
                  : std::string()) +
          (p.holds ? "yes" : "no") + " |\n";
  }
  return md;
}

Status WriteSweepReport(const std::string& dir, const RunContext& context, const SweepResult& sweep) {
  Status st = EnsureDir(dir);
  if (!st.ok()) return st;
  const bool trains = SweepTrains(sweep);
  json summary = ContextJsonWithTraining(context);
  summary["duration_s"] = sweep.references.empty() ? 0 : sweep.references.front().duration_s;
  summary["simulated_s"] = sweep.simulated_s;
  summary["simulated_s_per_wall_s"] = context.wall_s > 0 ? sweep.simulated_s / context.wall_s : 0;
  json points = json::array();
  for (const SweepPoint& p : sweep.points) {
    json j = RunJsonWithTraining(p.run, &p.impact);
    j["added_fraction"] = p.added_fraction;
    j["high_priority"].update(ImpactJson(p.impact.high));
    j["low_priority"].update(ImpactJson(p.impact.low));
    j["energy_per_token_change"] = p.impact.energy_per_token;
    j["meets_slos"] = p.meets_slos;
    j["holds"] = p.holds;
    points.push_back(j);
  }
  summary["points"] = points;
  json references = json::array();
  for (const RowRunResult& r : sweep.references) references.push_back(RunJsonWithTraining(r, nullptr));
  summary["unconstrained"] = references;
  json held = json::object();
  const std::vector<std::string> order = SweepPolicyNames(sweep);
  for (size_t i = 0; i < order.size() && i < sweep.max_added_held.size(); ++i) held[order[i]] = sweep.max_added_held[i];
  summary["max_added_fraction_held"] = held;
  st = WriteText(dir + "/summary.json", summary.dump(2) + "\n");
  if (st.ok()) {
    std::string csv = RunCsvHeader(trains);
    for (const SweepPoint& p : sweep.points) csv += RunCsvRow(p.run, p.added_fraction, p.impact, p.meets_slos, trains);
    st = WriteText(dir + "/sweep.csv", csv);
  }
  if (st.ok()) st = WriteText(dir + "/sweep.md", SweepMarkdown(sweep));
  if (st.ok()) st = WriteText(dir + "/config.conf", FormatConfig(*context.config));
  if (st.ok()) st = WriteText(dir + "/sweep_brakes.svg", SweepBrakesChartSvg(*context.config, sweep));
  if (st.ok()) st = WriteText(dir + "/sweep_latency_high.svg", SweepLatencyChartSvg(sweep, PriorityClass::kHigh));
  if (st.ok()) st = WriteText(dir + "/sweep_latency_low.svg", SweepLatencyChartSvg(sweep, PriorityClass::kLow));
  if (st.ok()) st = WriteText(dir + "/sweep_energy.svg", SweepEnergyChartSvg(sweep));
  if (st.ok() && trains) {
    st = WriteText(dir + "/sweep_training.svg", SweepTrainingChartSvg(*context.config, sweep));
  }
  return st;
}

}  // namespace wattcut::polca
