#include "wattcut/server/job_power_target.h"

#include <cstdio>
#include <set>

#include "wattcut/base/general_text.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/plan/plan_lookup.h"
#include "wattcut/server/job_deployments.h"
#include "wattcut/server/job_views.h"

namespace wattcut::server {

using nlohmann::json;

namespace {

// A point's time and powers, as the power target's answer shows them.
json PowerPointJson(const Frontier& frontier, size_t index) {
  const FrontierPoint& p = frontier.points()[index];
  const double t_min = frontier.points()[frontier.fastest_index()].time_s;
  const auto peak = PeakPowerPerGpuW(frontier, index);
  return json{{"index", index},
              {"time_s", p.time_s},
              {"slowdown", t_min > 0 ? p.time_s / t_min : 1.0},
              {"avg_power_per_gpu_w", AveragePowerPerGpuW(frontier, index)},
              {"peak_1s_power_per_gpu_w", peak ? json(*peak) : json(nullptr)}};
}

// Point `index`'s power per GPU of the kind `cap` was decided by.
double CapKindPower(const Frontier& frontier, const PowerTarget& target, const PowerCapPoint& cap, size_t index) {
  const bool peak = target.kind == PowerTarget::Kind::kPeak1s && cap.decided_by_target_kind;
  return peak ? PeakPowerPerGpuW(frontier, index).value_or(0.0) : AveragePowerPerGpuW(frontier, index);
}

}  // namespace

PowerTargetView ViewPowerTarget(Job& job) {
  PowerTargetView v;
  v.job_id = job.id();
  v.target = job.power_target();
  v.frontier_state = job.frontier_state();
  if (job.ready_frontier()) {
    v.frontier = job.frontier();
    v.selected = job.SelectedPoint();
  }
  v.deployment = job.deployment();
  v.ranks_min_step = job.progress().min_step();
  if (!v.applied()) return v;
  const Frontier& frontier = *v.frontier;
  v.cap = PointForPowerTarget(frontier, *v.target);
  v.met = v.cap->met;
  if (v.deployment.target.plan) {
    std::set<size_t> deployed = {v.deployment.target.base_index};
    if (!v.deployment.target.straggler_dp.empty()) deployed.insert(v.deployment.target.non_straggler_index);
    for (size_t i : deployed) {
      if (i >= frontier.points().size()) continue;
      if (CapKindPower(frontier, *v.target, *v.cap, i) > v.target->per_gpu_w) v.met = false;
    }
  }
  return v;
}

json PowerTargetJson(const PowerTargetView& v) {
  // Whether the ranks run the deployment: every rank has reported completing its apply step.
  const Deployment& deployment = v.deployment;
  json out = {{"job_id", v.job_id},
              {"power_target", v.target ? v.target->ToJson() : json(nullptr)},
              {"frontier", FrontierStateName(v.frontier_state)},
              {"deployment",
               {{"version", deployment.version},
                {"apply_from_step", deployment.apply_from_step},
                {"ranks_min_step", v.ranks_min_step ? json(*v.ranks_min_step) : json(nullptr)},
                {"every_rank_past_apply_step", v.ranks_min_step && *v.ranks_min_step > deployment.apply_from_step}}}};
  if (v.target) out["kind"] = v.target->KindName();
  out["applied"] = v.applied();
  if (v.frontier) out["selected"] = PowerPointJson(*v.frontier, v.selected);
  if (!v.target) return out;
  if (!v.frontier) {
    out["note"] = "the frontier is " + std::string(FrontierStateName(v.frontier_state)) +
                  ": the target is kept and applied when the frontier is ready";
    return out;
  }
  const PowerCapPoint& cap = *v.cap;
  out["point"] = PowerPointJson(*v.frontier, cap.index);
  out["point_power_per_gpu_w"] = cap.power_per_gpu_w;
  if (!cap.decided_by_target_kind) out["kind"] = "average";
  if (deployment.target.plan) {
    out["deployment"]["plan_index"] = deployment.target.base_index;
    if (!deployment.target.straggler_dp.empty()) {
      out["deployment"]["non_straggler_plan_index"] = deployment.target.non_straggler_index;
    }
  }
  out["met"] = v.met;
  if (!cap.met) out["lowest_power_per_gpu_w"] = cap.power_per_gpu_w;
  if (!cap.note.empty()) out["note"] = cap.note;
  return out;
}

StatusPowerTargetView StatusPowerTarget(const PowerTargetView& v) {
  StatusPowerTargetView t;
  t.kind = v.target->KindName();
  t.target_per_gpu_w = v.target->per_gpu_w;
  t.reason = v.target->reason;
  t.applied = v.applied();
  if (t.applied) {
    t.point = v.cap->index;
    t.point_per_gpu_w = v.cap->power_per_gpu_w;
    t.met = v.met;
  }
  return t;
}

PowerTargetGauge PowerTargetGaugeOf(const PowerTargetView& v) {
  PowerTargetGauge g;
  g.job_id = v.job_id;
  g.kind = v.target->KindName();
  g.target_per_gpu_w = v.target->per_gpu_w;
  g.applied = v.applied();
  if (g.applied) {
    g.met = v.met;
    g.point_per_gpu_w = v.cap->power_per_gpu_w;
  }
  return g;
}

Answer GetPowerTarget(Job& job) { return AnswerText(PowerTargetJson(ViewPowerTarget(job))); }

Answer ChangePowerTarget(Job& job, JobContext& ctx, std::optional<PowerTarget> target) {
  if (target) target->expires_at_unix_s = target->lease_s > 0 ? ctx.wall_clock.NowS() + target->lease_s : 0;
  const std::optional<PowerTarget> before = job.power_target();
  JobEdit edit;
  edit.power_target = std::move(target);
  if (Status s = job.Commit(std::move(edit)); !s) return s.error();
  const uint64_t version = job.deployment().version;
  Redeploy(job, ctx);
  std::string what = "cleared";
  const auto& now = job.power_target();
  if (now) {
    what = std::string(now->KindName()) + " " + GeneralText(now->per_gpu_w) + " W per GPU";
    if (!now->reason.empty()) what += " (" + now->reason + ")";
  }
  // A lease renewed with the same target (a row controller's, every lease / 3) is not logged.
  const bool renewal = before && now && before->kind == now->kind && before->per_gpu_w == now->per_gpu_w &&
                       job.deployment().version == version;
  if (!renewal) {
    std::fprintf(stderr, "wattcut serve: job %s: power target %s: deployment version %llu%s\n",
                 PrintableText(job.id()).c_str(), what.c_str(),
                 static_cast<unsigned long long>(job.deployment().version),
                 job.deployment().version != version ? " (new)" : " (unchanged)");
  }
  return AnswerText(PowerTargetJson(ViewPowerTarget(job)));
}

void LapsePowerTarget(Job& job, JobContext& ctx) {
  const std::optional<PowerTarget>& target = job.power_target();
  if (!target || target->lease_s <= 0 || ctx.wall_clock.NowS() < target->expires_at_unix_s) return;
  const double lease_s = target->lease_s;
  JobEdit edit;
  edit.power_target = std::optional<PowerTarget>();
  if (!job.Commit(std::move(edit))) return;  // kept as stored; the next call tries again
  Redeploy(job, ctx);
  std::fprintf(stderr, "wattcut serve: job %s: power target's lease (%s s) ran out: cleared, deployment version %llu\n",
               PrintableText(job.id()).c_str(), GeneralText(lease_s).c_str(),
               static_cast<unsigned long long>(job.deployment().version));
}

}  // namespace wattcut::server
