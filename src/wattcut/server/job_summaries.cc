#include "wattcut/server/job_summaries.h"

#include <algorithm>

#include "wattcut/server/deadline_following.h"
#include "wattcut/server/job_measured_energy.h"
#include "wattcut/server/job_power_target.h"
#include "wattcut/server/job_views.h"

namespace wattcut::server {

using nlohmann::json;

namespace {

// The frontier as the status page draws it: at most kStatusChartMaxPoints evenly spaced points,
// both ends kept, and the marked ones.
StatusFrontierView StatusFrontier(const Frontier& frontier, size_t selected, double compute_seconds) {
  const auto& points = frontier.points();
  auto point = [&points](size_t i) { return StatusPoint{i, points[i].time_s, points[i].energy_j}; };
  StatusFrontierView view;
  view.num_points = points.size();
  const size_t shown = std::min(points.size(), kStatusChartMaxPoints);
  for (size_t k = 0; k < shown; ++k) {
    view.curve.push_back(point(shown == 1 ? 0 : k * (points.size() - 1) / (shown - 1)));
  }
  view.fastest = point(frontier.fastest_index());
  view.min_energy = point(frontier.min_energy_index());
  view.selected = point(selected);
  view.compute_seconds = compute_seconds;
  return view;
}

}  // namespace

json JobJson(const Job& job) {
  json out = json{{"job", ToJson(job.info())},
                  {"planner", ToJson(job.planner())},
                  {"ranks_registered", job.num_registered()},
                  {"rank_profiles", job.num_rank_profiles()},
                  {"ranks_with_results", job.num_results()},
                  {"round", job.barrier().completed_rounds()},
                  {"ranks_waiting", job.barrier().num_waiting()},
                  {"profile_source", job.profile_source().empty() ? json(nullptr) : json(job.profile_source())},
                  {"profile_warnings", ProfileWarningsJson(job.profile_warnings())},
                  {"frontier", FrontierStateName(job.frontier_state())},
                  {"selection", job.selection().ToJson()},
                  {"state", json::parse(EncodeJobState(job.State()))}};
  // The nodes' reports are on their own endpoint, paged (GET /v1/jobs/{id}/measured-energy): the
  // job's answer carries their summary, whatever they hold.
  if (out["state"].is_object() && out["state"].contains("measured_gpu_energy")) {
    out["state"]["measured_gpu_energy"] = MeasuredGpuEnergyJson(job.measured_gpu_energy());
  }
  out.update(GpuEnergyJson(job));
  return out;
}

json JobListEntry(const Job& job) {
  json entry = ToJson(job.info());
  entry["ranks_registered"] = job.num_registered();
  entry["round"] = job.barrier().completed_rounds();
  entry["frontier"] = FrontierStateName(job.frontier_state());
  // The totals only (GET /v1/jobs/{id}/measured-energy has each node's report).
  const MeasuredGpuEnergy& measured = job.measured_gpu_energy();
  entry["measured_gpu_energy_j"] = measured.empty() ? json(nullptr) : json(TotalGpuEnergyJ(measured));
  entry["estimated_gpu_energy_j"] = job.saving().estimated_j();
  return entry;
}

JobStatusView JobStatus(Job& job, double now_unix_s) {
  JobStatusView v;
  const JobInfo& info = job.info();
  v.job_id = info.job_id;
  v.name = info.job_metadata;
  v.pp_degree = info.pp_degree;
  v.dp_degree = info.dp_degree;
  v.tp_degree = info.tp_degree;
  v.world_size = info.world_size;
  v.ranks_registered = job.num_registered();
  v.rounds = job.barrier().completed_rounds();
  v.num_microbatches = job.planner().num_microbatches;
  v.schedule = job.planner().schedule;
  v.virtual_stages = job.planner().virtual_stages;
  v.frontier_state = job.frontier_state();
  v.frontier_error = job.frontier_error();
  v.profile_source = job.profile_source();
  if (job.sweep().active()) v.profiling_freq_mhz = job.sweep().current_freq_mhz();
  const Deployment& deployment = job.deployment();
  v.deployment_version = deployment.version;
  v.deployment_mode = deployment.version == 0 ? "none" : deployment.target.plan ? "plan" : "all_max";
  v.job_step = job.progress().max_step();
  for (const auto& [dp, s] : job.stragglers()) v.stragglers.push_back({dp, s.kind, s.value});
  if (const Frontier* frontier = job.ready_frontier()) {
    const size_t selected = job.SelectedPoint();
    v.frontier = StatusFrontier(*frontier, selected, job.frontier_seconds());
    if (!job.stragglers().empty()) {
      v.straggler_time_s = StragglerIterationTime(*frontier, selected, job.stragglers());
      const size_t i = frontier->IndexForIterationTime(v.straggler_time_s);
      v.frontier->non_straggler = StatusPoint{i, frontier->points()[i].time_s, frontier->points()[i].energy_j};
    }
    if (const auto& all_max = job.AllMax()) {
      v.frontier->all_max_time_s = all_max->time_s;
      v.frontier->all_max_energy_j = all_max->energy_j;
    }
  }
  const EnergySavingTally& saving = job.saving();
  v.saving.all_max_known = job.AllMax().has_value();
  v.saving.started = saving.started();
  v.saving.counted_steps = saving.counted_steps();
  v.saving.plan_steps = saving.plan_steps();
  v.saving.saved_j = saving.saved_j();
  v.saving.step_saving_j = job.StepSaving();
  v.gpu_energy = StatusGpuEnergy(job);
  if (job.power_target()) v.power_target = StatusPowerTarget(ViewPowerTarget(job));
  if (job.deadline()) v.deadline = DeadlineStatus(*job.deadline(), job.progress().max_step(), now_unix_s);
  return v;
}

}  // namespace wattcut::server
