#include "wattcut/server/job_selection.h"

#include <nlohmann/json.hpp>

#include "wattcut/server/job_checks.h"
#include "wattcut/server/job_deployments.h"
#include "wattcut/server/job_views.h"

namespace wattcut::server {

using nlohmann::json;

Answer SelectPlan(Job& job, JobContext& ctx, const PlanSelection& selection) {
  JobEdit edit;
  edit.selection = selection;
  if (Status s = job.Commit(std::move(edit)); !s) return s.error();
  Redeploy(job, ctx);
  json out = {{"selection", selection.ToJson()}};
  if (const auto& frontier = job.frontier()) {
    const size_t i = job.SelectedPoint();
    out["index"] = i;
    out["time_s"] = frontier->points()[i].time_s;
    out["energy_j"] = frontier->points()[i].energy_j;
  }
  return AnswerText(out);
}

Answer ReportStraggler(Job& job, JobContext& ctx, const StragglerReport& report) {
  // Checked here too: a recovery of a pipeline that does not exist changes no stored straggler.
  if (Status s = CheckDpRank(job.info(), report.dp_rank); !s) return s.error();
  Stragglers next = job.stragglers();
  if (report.kind == StragglerReport::Kind::kRecovered) {
    next.erase(report.dp_rank);
  } else {
    next[report.dp_rank] = Straggler{report.kind, report.value};
  }
  JobEdit edit;
  edit.stragglers = std::move(next);
  if (Status s = job.Commit(std::move(edit)); !s) return s.error();
  ctx.metrics.RecordStragglerReport(report.kind == StragglerReport::Kind::kRecovered);
  Redeploy(job, ctx);
  return ListStragglers(job);
}

Answer ListStragglers(Job& job) {
  json reply = {{"stragglers", StragglersJson(job.stragglers())}};
  if (job.frontier() && !job.stragglers().empty()) {
    const double t = StragglerIterationTime(*job.frontier(), job.SelectedPoint(), job.stragglers());
    reply["iteration_time_s"] = t;
    reply["non_straggler_index"] = job.frontier()->IndexForIterationTime(t);
  }
  return AnswerText(reply);
}

}  // namespace wattcut::server
