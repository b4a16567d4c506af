#include "wattcut/server/job_profiles.h"

#include <nlohmann/json.hpp>

#include "wattcut/profile/profile_csv.h"
#include "wattcut/server/job_checks.h"
#include "wattcut/server/job_views.h"
#include "wattcut/server/rank_profile_aggregation.h"

namespace wattcut::server {

using nlohmann::json;

namespace {

std::string ComputingText(const std::string& job_id, const std::string& source) {
  return AnswerText(json{{"job_id", job_id}, {"frontier", "computing"}, {"profile_source", source}});
}

// Stores `install` as the job's profile (with `planner` when it comes with new settings) and
// starts its frontier.
Status InstallProfile(Job& job, JobContext& ctx, ProfileInstall install, std::optional<PlannerSettings> planner)
    REQUIRES(job.mu()) {
  JobEdit edit;
  edit.profile = std::move(install);
  edit.planner = std::move(planner);
  if (Status s = job.Commit(std::move(edit)); !s) return s;
  SubmitFrontier(job, ctx);
  return Status::Ok();
}

}  // namespace

void SubmitFrontier(Job& job, JobContext& ctx) {
  const uint64_t generation = job.BeginFrontierComputation();
  if (job.planner().num_microbatches < 1) {
    job.SetFrontierFailed("num_microbatches is not set; PUT /v1/jobs/{job_id}/planner");
    return;
  }
  ctx.worker.Submit(FrontierTask{job.id(), generation, job.profile(), job.planner().ToPlannerOptions()});
}

Status InstallRankProfiles(Job& job, JobContext& ctx, const std::string& source) {
  auto aggregated = job.AggregateReceivedRankProfiles();
  if (!aggregated) return aggregated.error();
  std::string stored = ProfileCsvText(aggregated->profile);
  return InstallProfile(job, ctx,
                        ProfileInstall{std::make_shared<const Profile>(std::move(aggregated->profile)),
                                       std::move(aggregated->dropped), std::move(stored), source},
                        std::nullopt);
}

Answer SetPlanner(Job& job, JobContext& ctx, const PlannerPatch& patch) {
  Result<PlannerSettings> merged = PlannerSettingsFromJson(patch.fields, job.planner());
  if (!merged) return merged.error();
  return SetPlanner(job, ctx, *merged);
}

Answer SetPlanner(Job& job, JobContext& ctx, const PlannerSettings& planner) {
  JobEdit edit;
  edit.planner = planner;
  if (Status s = job.Commit(std::move(edit)); !s) return s.error();
  if (job.profile()) SubmitFrontier(job, ctx);
  return AnswerText(json{{"planner", ToJson(planner)}, {"frontier", FrontierStateName(job.frontier_state())}});
}

Answer UploadProfile(Job& job, JobContext& ctx, const ProfileUpload& upload) {
  if (upload.planner) {
    // The settings first: a CSV beyond the planner's limits is not even parsed.
    if (Status s = CheckPipelineLimits(job.info(), *upload.planner); !s) return s.error();
  }
  auto read = ParseProfileCsvWithWarnings(upload.csv, "job " + job.id() + " profile", job.info().pp_degree);
  if (!read) return read.error();
  ProfileInstall install{std::make_shared<const Profile>(std::move(read->profile)), std::move(read->dropped),
                         upload.csv, "csv"};
  if (Status s = InstallProfile(job, ctx, std::move(install), upload.planner); !s) return s.error();
  return ComputingText(job.id(), "csv");
}

Answer UploadRankProfile(Job& job, JobContext& ctx, const RankProfile& profile) {
  JobEdit edit;
  edit.rank_profile = profile;
  if (Status s = job.Commit(std::move(edit)); !s) return s.error();
  json out = {{"rank_profiles", job.num_rank_profiles()}, {"world_size", job.info().world_size}};
  if (job.num_rank_profiles() == job.info().world_size) {
    if (Status s = InstallRankProfiles(job, ctx, "rank_profiles"); !s) return s.error();
    out["frontier"] = "computing";
    out["profile_warnings"] = ProfileWarningsJson(job.profile_warnings());
  }
  return AnswerText(out);
}

Answer ComputeFrontierNow(Job& job, JobContext& ctx) {
  if (job.profile()) {
    SubmitFrontier(job, ctx);
    return AnswerText(json{{"frontier", "computing"}});
  }
  if (job.num_rank_profiles() == 0) {
    return Error::Conflict("job '" + job.id() +
                           "' has no profile: upload one (PUT /v1/jobs/{job_id}/profile or POST "
                           "/v1/jobs/{job_id}/rank_profiles)");
  }
  if (Status s = InstallRankProfiles(job, ctx, "rank_profiles"); !s) return s.error();
  return ComputingText(job.id(), "rank_profiles");
}

}  // namespace wattcut::server
