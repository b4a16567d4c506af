// Which point of a job's frontier its pipelines run: the selected plan (PUT /v1/jobs/{id}/plan)
// and the stragglers that slow the others to their pace (POST / GET /v1/jobs/{id}/stragglers).
#pragma once

#include "wattcut/server/job.h"
#include "wattcut/server/job_context.h"

namespace wattcut::server {

Answer SelectPlan(Job& job, JobContext& ctx, const PlanSelection& selection) REQUIRES(job.mu());
Answer ReportStraggler(Job& job, JobContext& ctx, const StragglerReport& report) REQUIRES(job.mu());
Answer ListStragglers(Job& job) REQUIRES(job.mu());

}  // namespace wattcut::server
