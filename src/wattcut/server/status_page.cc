#include "wattcut/server/status_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "wattcut/base/energy_units.h"
#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/plot/chart.h"
#include "wattcut/plot/svg_document.h"

namespace wattcut::server {

// Text into the page: the SVG writer's escaping (& < > " ' as entities, control bytes
// dropped), which is HTML5's too.
using plot::EscapeXml;

namespace {

std::string Fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

// Seconds with enough decimals for an iteration time (3 significant ones below 1 s).
std::string Seconds(double s) { return Fixed(s, std::fabs(s) < 1 ? 4 : 3) + " s"; }

// J, kJ or MJ, and kWh beside an amount of a kWh or more.
std::string Energy(double j) {
  const double a = std::fabs(j);
  std::string text = a >= 1e6 ? Fixed(j / 1e6, 3) + " MJ" : a >= 1e3 ? Fixed(j / 1e3, 3) + " kJ" : Fixed(j, 1) + " J";
  if (a >= kJoulesPerKwh) text += " (" + Fixed(j / kJoulesPerKwh, 2) + " kWh)";
  return text;
}

std::string Uptime(double s) {
  const auto total = static_cast<int64_t>(std::max(0.0, s));
  const int64_t days = total / 86400, hours = total % 86400 / 3600, minutes = total % 3600 / 60;
  if (days > 0) return std::to_string(days) + " d " + std::to_string(hours) + " h";
  if (hours > 0) return std::to_string(hours) + " h " + std::to_string(minutes) + " min";
  if (minutes > 0) return std::to_string(minutes) + " min " + std::to_string(total % 60) + " s";
  return std::to_string(total) + " s";
}

void Row(std::string& out, const std::string& name, const std::string& html_value) {
  out += "<tr><th>" + name + "</th><td>" + html_value + "</td></tr>\n";
}

// Every occurrence of `from` in `text` replaced by `to`.
std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string PointText(const StatusPoint& p) {
  return "point " + std::to_string(p.index) + ": " + Seconds(p.time_s) + ", " + Energy(p.energy_j);
}

void FrontierSection(std::string& out, const JobStatusView& job, size_t number) {
  const StatusFrontierView& f = *job.frontier;
  out += "<div class=\"frontier\">" + StatusFrontierChartSvg(f, "job" + std::to_string(number) + "-") + "</div>\n";
  out += "<table class=\"points\">\n";
  Row(out, "frontier", std::to_string(f.num_points) + " points, computed in " + Fixed(f.compute_seconds, 2) + " s");
  Row(out, "T<sub>min</sub> (fastest)", PointText(f.fastest));
  Row(out, "T* (least energy)", PointText(f.min_energy));
  Row(out, "selected plan", PointText(f.selected));
  if (f.non_straggler) Row(out, "non-straggler plan", PointText(*f.non_straggler));
  if (f.all_max_time_s && f.all_max_energy_j) {
    Row(out, "AllMax",
        Seconds(*f.all_max_time_s) + ", " + Energy(*f.all_max_energy_j) +
            " (every computation at its highest clock, blocking until T<sub>min</sub>)");
  } else {
    Row(out, "AllMax", "not known (the profile does not give it for this schedule)");
  }
  out += "</table>\n";
}

void StragglerSection(std::string& out, const JobStatusView& job) {
  if (job.stragglers.empty()) {
    out += "<p class=\"stragglers\">Stragglers: none reported.</p>\n";
    return;
  }
  out += "<table class=\"stragglers\"><tr><th>straggler (dp rank)</th><th>reported</th></tr>\n";
  for (const StatusStragglerView& s : job.stragglers) {
    const std::string reported = s.kind == StragglerReport::Kind::kSlowdown ? "slowdown " + Fixed(s.value, 3) + "x"
                                                                            : "iteration time " + Seconds(s.value);
    out += "<tr><td>" + std::to_string(s.dp_rank) + "</td><td>" + reported + "</td></tr>\n";
  }
  out += "</table>\n";
  if (job.straggler_time_s > 0) {
    out += "<p>Slowest straggler's iteration time T' = " + Seconds(job.straggler_time_s) +
           "; the other pipelines run the least-energy plan not faster than it.</p>\n";
  }
}

void SavingSection(std::string& out, const JobStatusView& job) {
  const StatusSavingView& s = job.saving;
  out += "<p class=\"saving\"><b>Energy saved against AllMax:</b> ";
  if (!s.started) {
    out +=
        "no step reported yet (ranks report their steps when they fetch GET /v1/jobs/{id}/deployment; "
        "jobs on the round protocol, GET /schedule, report none).";
  } else {
    out += "<span class=\"saved\">" + Energy(s.saved_j) + "</span> over " + std::to_string(s.counted_steps) +
           " steps reported since the server started (" + std::to_string(s.plan_steps) + " of them under a plan)";
    if (s.all_max_known) {
      out += "; the plan deployed now saves " + Energy(s.step_saving_j) + " a step against AllMax.";
    } else {
      out += "; no AllMax point is known for this job, so no step counts a saving.";
    }
  }
  out += "</p>\n";
}

std::string PowerTargetText(const std::optional<StatusPowerTargetView>& target) {
  if (!target) return "none";
  std::string text = std::string(target->kind == "peak_1s" ? "peak 1-s power" : "average power") +
                     " &lt;= " + Fixed(target->target_per_gpu_w, 1) + " W per GPU";
  if (!target->reason.empty()) text += " (" + EscapeXml(target->reason) + ")";
  if (!target->applied) return text + ": kept until the frontier is ready";
  if (!target->met) {
    return text + ": <span class=\"error\">not met</span>: the job runs its lowest-power plan, point " +
           std::to_string(target->point) + " at " + Fixed(target->point_per_gpu_w, 1) + " W per GPU";
  }
  return text + ": point " + std::to_string(target->point) + " at " + Fixed(target->point_per_gpu_w, 1) +
         " W per GPU, met";
}

// "measured 12.300 kJ on 2 nodes (slurm-epilog) &#183; planner's estimate 11.800 kJ over 40 steps",
// and what each covers.
std::string GpuEnergyText(const StatusGpuEnergyView& e) {
  std::string text = "not measured (no node reported)";
  if (e.measured_nodes > 0) {
    text = "measured " + Energy(e.measured_j) + " on " + std::to_string(e.measured_nodes) +
           (e.measured_nodes == 1 ? " node" : " nodes");
    std::string sources;
    for (const std::string& source : e.sources) sources += (sources.empty() ? "" : ", ") + EscapeXml(source);
    if (!sources.empty()) text += " (" + sources + ")";
  }
  text += " &#183; planner's estimate ";
  text += e.estimated_steps > 0 ? Energy(e.estimated_j) + " over " + std::to_string(e.estimated_steps) +
                                      (e.estimated_steps == 1 ? " step" : " steps")
                                : std::string("none yet (no step it can estimate reported)");
  return text +
         "<br/><span class=\"note\">The measurement covers the whole job on those nodes, start-up and profiling "
         "included; the estimate only the steps the ranks reported since the server started.</span>";
}

std::string DeadlineText(const std::optional<StatusDeadlineView>& d) {
  if (!d) return "none";
  std::string text =
      Fixed(d->iterations, 0) + " iterations by " + EscapeXml(d->deadline) + " at the least " + EscapeXml(d->objective);
  if (!d->error.empty()) return text + ": <span class=\"error\">" + EscapeXml(d->error) + "</span>";
  if (!d->point_now) return text + ": planned when the frontier is ready";
  // A cost is in the price series' own currency, which the series does not name.
  const char* unit = d->objective == "carbon" ? " kg" : d->objective == "energy" ? " kWh" : "";
  const char* currency = d->objective == "cost" ? " (in the price series' currency)" : "";
  text += ": point " + std::to_string(*d->point_now) + " now; " + Fixed(d->done, 0) + " done of " +
          Fixed(d->expected, 0) + " planned by now; " + EscapeXml(d->objective) + " " + Fixed(d->planned_so_far, 2) +
          unit + " of " + Fixed(d->planned_total, 2) + unit + currency + " so far as planned; finish " +
          EscapeXml(d->finish);
  if (d->replans > 0) text += "; replanned " + std::to_string(d->replans) + " times";
  return text;
}

void JobSection(std::string& out, const JobStatusView& job, size_t number) {
  out += "<section class=\"job\">\n";
  out += "<h2 class=\"job-name\">" + EscapeXml(job.name && !job.name->empty() ? *job.name : job.job_id) + "</h2>\n";
  out += "<p class=\"job-id\">job " + EscapeXml(job.job_id) + "</p>\n";
  out += "<table class=\"facts\">\n";
  Row(out, "phase", "<span class=\"phase\">" + EscapeXml(PhaseText(job)) + "</span>");
  if (job.frontier_state == FrontierState::kFailed && !job.frontier_error.empty()) {
    Row(out, "error", "<span class=\"error\">" + EscapeXml(job.frontier_error) + "</span>");
  }
  Row(out, "ranks",
      std::to_string(job.ranks_registered) + " of " + std::to_string(job.world_size) + " registered (pp " +
          std::to_string(job.pp_degree) + " x dp " + std::to_string(job.dp_degree) + " x tp " +
          std::to_string(job.tp_degree) + ")");
  std::string schedule = std::string(PipelineScheduleName(job.schedule));
  if (job.virtual_stages > 1) schedule += ", " + std::to_string(job.virtual_stages) + " chunks per rank";
  Row(out, "microbatches", job.num_microbatches > 0 ? std::to_string(job.num_microbatches) : "not set");
  Row(out, "schedule", EscapeXml(schedule));
  Row(out, "profile", job.profile_source.empty() ? "none yet" : EscapeXml(job.profile_source));
  Row(out, "rounds served", std::to_string(job.rounds));
  Row(out, "deployment",
      job.deployment_version == 0
          ? std::string("nothing deployed")
          : "version " + std::to_string(job.deployment_version) + ", " + EscapeXml(job.deployment_mode) +
                ", largest reported step " + std::to_string(job.job_step));
  Row(out, "power target", PowerTargetText(job.power_target));
  Row(out, "deadline schedule", DeadlineText(job.deadline));
  Row(out, "GPU energy", GpuEnergyText(job.gpu_energy));
  out += "</table>\n";
  if (job.frontier) FrontierSection(out, job, number);
  StragglerSection(out, job);
  SavingSection(out, job);
  out += "</section>\n";
}

constexpr const char* kStyle = R"(
body { font-family: "DejaVu Sans", Verdana, sans-serif; margin: 24px; color: #222; background: #fff; }
header { border-bottom: 2px solid #1f77b4; margin-bottom: 16px; }
h1 { font-size: 24px; margin: 0 0 6px 0; }
.server { color: #444; }
section.job { border: 1px solid #ccc; border-radius: 6px; padding: 12px 18px; margin: 0 0 20px 0; max-width: 980px; }
h2.job-name { font-size: 36px; margin: 4px 0; word-break: break-all; }
.job-id { color: #666; font-family: "DejaVu Sans Mono", monospace; font-size: 13px; margin: 0 0 10px 0; word-break: break-all; }
table { border-collapse: collapse; margin: 6px 0; }
th { text-align: left; font-weight: normal; color: #555; padding: 2px 16px 2px 0; vertical-align: top; white-space: nowrap; }
td { padding: 2px 12px 2px 0; }
.phase { font-weight: bold; }
.error { color: #b00020; }
.saving { font-size: 16px; }
.saved { font-weight: bold; color: #2ca02c; }
.note { color: #555; font-size: 13px; max-width: 980px; }
)";

}  // namespace

std::string PhaseText(const JobStatusView& job) {
  switch (job.frontier_state) {
    case FrontierState::kReady:
      return "planned";
    case FrontierState::kComputing:
      return "computing the frontier";
    case FrontierState::kFailed:
      return "frontier failed";
    case FrontierState::kNone:
      break;
  }
  if (job.ranks_registered < job.world_size) {
    return "registering ranks (" + std::to_string(job.ranks_registered) + " of " + std::to_string(job.world_size) + ")";
  }
  if (job.profiling_freq_mhz) return "profiling at " + std::to_string(*job.profiling_freq_mhz) + " MHz";
  return "waiting for a profile";
}

std::string StatusFrontierChartSvg(const StatusFrontierView& f, const std::string& id_prefix) {
  double top_j = 0;
  for (const StatusPoint& p : f.curve) top_j = std::max(top_j, p.energy_j);
  if (f.all_max_energy_j) top_j = std::max(top_j, *f.all_max_energy_j);
  const bool kj = top_j >= 1e4;
  const double scale = kj ? 1e-3 : 1;
  auto at = [scale](double time_s, double energy_j) { return plot::Point{time_s, energy_j * scale}; };

  plot::Chart chart("", plot::AxisSpec("iteration time (s)"),
                    plot::AxisSpec(kj ? "energy per iteration (kJ)" : "energy per iteration (J)"));
  chart.set_size(720, 380);
  std::vector<plot::Point> curve;
  curve.reserve(f.curve.size());
  for (const StatusPoint& p : f.curve) curve.push_back(at(p.time_s, p.energy_j));
  chart.AddSeries(plot::Series("frontier", std::move(curve), plot::SeriesKind::kLine, "#1f77b4"));
  auto mark = [&](const std::string& name, const std::string& label, double time_s, double energy_j,
                  const std::string& color, double radius) {
    plot::Series s(name, {at(time_s, energy_j)}, plot::SeriesKind::kScatter, color);
    s.width = radius;
    s.point_labels = {label};
    chart.AddSeries(std::move(s));
  };
  // A point that is also T_min or T* is labelled once: "T_min, selected".
  auto label = [&f](const StatusPoint& p, std::string own) {
    if (p.index == f.selected.index && own != "selected") own += ", selected";
    if (f.non_straggler && p.index == f.non_straggler->index && own != "non-straggler") own += ", non-straggler";
    return own;
  };
  const bool selected_marked = f.selected.index == f.fastest.index || f.selected.index == f.min_energy.index;
  const bool non_straggler_marked =
      f.non_straggler && (f.non_straggler->index == f.fastest.index || f.non_straggler->index == f.min_energy.index);
  if (f.non_straggler) {
    mark("non-straggler plan", non_straggler_marked ? "" : "non-straggler", f.non_straggler->time_s,
         f.non_straggler->energy_j, "#ff7f0e", 5);
  }
  mark("selected plan", selected_marked ? "" : "selected", f.selected.time_s, f.selected.energy_j, "#2ca02c", 6);
  // A frontier of one point: T_min is T*, labelled once.
  const bool one_point = f.fastest.index == f.min_energy.index;
  mark("T_min", label(f.fastest, one_point ? "T_min, T*" : "T_min"), f.fastest.time_s, f.fastest.energy_j, "#d62728",
       4);
  mark("T*", one_point ? "" : label(f.min_energy, "T*"), f.min_energy.time_s, f.min_energy.energy_j, "#9467bd", 4);
  if (f.all_max_time_s && f.all_max_energy_j) {
    mark("AllMax", "AllMax", *f.all_max_time_s, *f.all_max_energy_j, "#444444", 4);
  }
  std::string svg = chart.ToSvg();
  if (svg.rfind("<?xml", 0) == 0) svg.erase(0, svg.find('\n') + 1);
  return Replaced(Replaced(svg, "id=\"plot-area\"", "id=\"" + id_prefix + "plot-area\""), "url(#plot-area)",
                  "url(#" + id_prefix + "plot-area)");
}

std::string StatusPageHtml(const ServerStatusView& view) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
      "<title>wattcut serve: status</title>\n<style>" +
      std::string(kStyle) + "</style>\n</head>\n<body>\n<header>\n<h1>wattcut planning server</h1>\n";
  out += "<p class=\"server\">version " + EscapeXml(view.version) + " &#183; up " + Uptime(view.uptime_s) + " &#183; " +
         std::to_string(view.num_jobs) + (view.num_jobs == 1 ? " job" : " jobs");
  if (view.jobs.size() < view.num_jobs) {
    out += " (the " + std::to_string(view.jobs.size()) + " most recently registered shown)";
  }
  if (view.num_quarantined > 0) {
    out += " &#183; " + std::to_string(view.num_quarantined) + " quarantined (GET /v1/jobs lists them)";
  }
  out += "</p>\n</header>\n";
  if (view.jobs.empty()) out += "<p class=\"empty\">No jobs are registered.</p>\n";
  for (size_t i = 0; i < view.jobs.size(); ++i) JobSection(out, view.jobs[i], i);
  out +=
      "<p class=\"note\">The energy saved is the planner's estimate, not a measurement: for each training step the "
      "ranks reported (the largest step any rank reported to GET /v1/jobs/{id}/deployment since this server "
      "started), tp_degree &#215; the sum over the data-parallel pipelines of the AllMax point's energy minus the "
      "energy of the frontier point that pipeline ran, as the job's profile predicts them; steps run under AllMax "
      "save nothing. The frontier energies are one pipeline's, blocking power included. JSON: GET /v1/jobs, "
      "GET /v1/jobs/{id}/frontier; API: GET /openapi.yaml.</p>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace wattcut::server
