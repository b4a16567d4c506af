#include "wattcut/server/job_frontier.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "wattcut/base/printable_text.h"
#include "wattcut/plan/frontier_file.h"
#include "wattcut/server/job_deployments.h"
#include "wattcut/server/job_views.h"

namespace wattcut::server {

using nlohmann::json;

bool FrontierStarted(Job& job, const FrontierTask& task) {
  if (job.frontier_generation() != task.generation || job.deleted()) return false;
  // Written before the work: if the planner takes the process down, the next start knows.
  JobEdit edit;
  edit.frontier_attempts = job.frontier_attempts() + 1;
  (void)job.CommitBookkeeping(std::move(edit));
  return true;
}

FrontierResult FrontierResultOf(Result<Frontier> frontier, double seconds) {
  FrontierResult result;
  result.compute_seconds = seconds;
  if (!frontier) {
    result.error = frontier.error().message;
    result.summary_json = AnswerText(json{{"error", result.error}});
  } else if (frontier->points().empty()) {
    result.error = "the planner returned an empty frontier";
  } else {
    result.frontier = std::make_shared<const Frontier>(std::move(*frontier));
    result.stored_text = FrontierFileText(*result.frontier);
    result.summary_json = AnswerText(FrontierSummaryJson(*result.frontier, seconds));
  }
  return result;
}

void FrontierDone(Job& job, JobContext& ctx, const FrontierTask& task, FrontierResult result) {
  if (job.deleted()) return;
  // The computation ended (either way): the interrupted ones before it were not in a row.
  if (job.frontier_attempts() != 0) {
    JobEdit edit;
    edit.frontier_attempts = 0;
    (void)job.CommitBookkeeping(std::move(edit));
  }
  if (job.frontier_generation() != task.generation) return;
  if (!result.frontier && result.summary_json.empty()) {
    job.SetFrontierFailed(std::move(result.error));
    return;
  }
  // Stored so that a restart serves it at once. A frontier that cannot be stored is still
  // served; the next start computes it again.
  const bool ready = result.frontier != nullptr;
  JobEdit edit;
  edit.frontier_result = std::move(result);
  if (Status s = job.CommitBookkeeping(std::move(edit)); !s && ready) {
    std::fprintf(stderr,
                 "wattcut serve: job %s: the frontier could not be stored (%s); it is served, and computed "
                 "again after a restart\n",
                 PrintableText(task.job_id).c_str(), s.error().message.c_str());
  }
  Redeploy(job, ctx);
}

Answer FrontierStatus(Job& job) {
  const Frontier* ready = job.ready_frontier();
  return AnswerText(FrontierStatusJson(job.frontier_state(), ready, ready ? job.SelectedPoint() : 0,
                                       ready ? job.AllMax() : std::nullopt, job.frontier_seconds(),
                                       job.frontier_error(), job.frontier_note()));
}

Answer FrontierPoints(Job& job, int64_t offset, int64_t limit) {
  if (job.frontier_state() != FrontierState::kReady) {
    return Error::Conflict(
        "job '" + job.id() + "': the frontier is " + FrontierStateName(job.frontier_state()) +
        (job.frontier_state() == FrontierState::kFailed ? ": " + job.frontier_error() : std::string()));
  }
  return AnswerText(FrontierPointsJson(*job.frontier(), offset, limit));
}

}  // namespace wattcut::server
