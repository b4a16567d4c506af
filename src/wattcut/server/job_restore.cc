#include "wattcut/server/job_restore.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "wattcut/base/printable_text.h"
#include "wattcut/plan/frontier_file.h"
#include "wattcut/profile/profile_csv.h"
#include "wattcut/server/job_deadline.h"
#include "wattcut/server/job_decision.h"
#include "wattcut/server/job_frontier.h"

namespace wattcut::server {

namespace {

// The profile and the frontier of `s` into `job`: true when the frontier is to be computed.
bool RestoreProfileAndFrontier(Job& job, const StoredJob& s) REQUIRES(job.mu()) {
  if (s.profile_source.empty() && s.profile_csv.empty()) return false;  // no profile yet
  // The profile, as it was installed (an uploaded CSV, or the aggregate of the rank profiles
  // written with ProfileCsvText, which reads back exactly). The warnings of one built from rank
  // profiles come from aggregating the stored rank profiles again.
  auto profile = ParseProfileCsvWithWarnings(s.profile_csv, "job " + s.job_id + " profile", job.info().pp_degree);
  if (profile && (s.profile_source == "rank_profiles" || s.profile_source == "server_profiling")) {
    if (auto again = job.AggregateReceivedRankProfiles(); again) profile->dropped = std::move(again->dropped);
  }
  if (!profile) {
    job.RestoreProfile(s.profile_source, nullptr, {});
    job.SetFrontierFailed("the stored profile cannot be read: " + profile.error().message +
                          "; upload it again (PUT /v1/jobs/{job_id}/profile)");
    return false;
  }
  job.RestoreProfile(s.profile_source, std::make_shared<const Profile>(std::move(profile->profile)),
                     std::move(profile->dropped));

  // The frontier: the stored one when it reads back and no computation was interrupted since (a
  // POST /frontier the server died in is resumed, under the crash-loop breaker); otherwise
  // computed again.
  if (!s.frontier_text.empty() && job.frontier_attempts() == 0) {
    auto frontier = ParseFrontierFile(s.frontier_text, "job " + s.job_id + " stored frontier");
    if (frontier && frontier->num_stages() == job.info().pp_degree) {
      double seconds = 0;
      try {
        seconds = nlohmann::json::parse(s.frontier_summary_json).value("compute_seconds", 0.0);
      } catch (const nlohmann::json::exception&) {
        // The summary is for listings; a frontier without one is still whole.
      }
      job.BeginFrontierComputation();
      job.SetFrontierReady(std::make_shared<const Frontier>(std::move(*frontier)), seconds);
      return false;
    }
    job.SetFrontierNote("the stored frontier could not be read (" +
                        (frontier ? std::string("it has the wrong number of stages") : frontier.error().message) +
                        "), so it was computed again");
    std::fprintf(stderr, "wattcut serve: job %s: %s\n", PrintableText(s.job_id).c_str(), job.frontier_note().c_str());
  }
  if (job.frontier_attempts() >= kMaxInterruptedFrontierAttempts) {
    job.SetFrontierFailed("the frontier computation was interrupted " + std::to_string(job.frontier_attempts()) +
                          " times in a row (the server stopped or crashed while computing it), so it is not "
                          "computed again automatically; POST /v1/jobs/" +
                          s.job_id + "/frontier computes it again");
    return false;
  }
  return true;
}

}  // namespace

Result<RestoredJob> RestoreJob(JobStore& store, const StoredJob& stored, double now_unix_s) {
  auto decoded = DecodeStoredJob(stored);
  if (!decoded) return decoded.error();
  RestoredJob restored{std::make_shared<Job>(store, std::move(*decoded)), false};
  Job& job = *restored.job;
  MutexLock lock(job.mu());
  restored.compute_frontier = RestoreProfileAndFrontier(job, stored);
  // What the ranks were given before the restart: the stored frontier, selection and stragglers
  // decide it again (no new version); with the frontier still to compute it is AllMax, and the
  // ranks keep the plan they have until the frontier is back. A deadline schedule is computed
  // again from its stored spec in the background once the registry is loaded (job_deadline.h:
  // StartDeadlineOnNewFrontier), and the deployment waits for it: its cap was in that.
  job.SetDeploymentTargetAfterRestore(
      DeploymentTarget::From(Decide(job, now_unix_s, /*may_start_profiling=*/false), job.frontier_generation()));
  return restored;
}

}  // namespace wattcut::server
