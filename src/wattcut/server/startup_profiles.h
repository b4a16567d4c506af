// Profiles for new jobs, given at start-up (wattcut serve --profile-for-new-jobs CSV).
//
// Zeus's client registers its job and then fetches its schedule once, at once, before any
// profile could be uploaded, and keeps that schedule for the whole run; Zeus's own server
// answers that fetch with a plan computed beforehand. So the operator hands the server a
// profile CSV per pipeline depth: each file's stage count S is read from the file, and no two
// files may have the same S. Every profile's frontier is computed with the server's default
// planner settings before the server listens. A job registered without a profile whose
// pp_degree is S and whose planner settings equal those defaults gets the profile and that
// frontier at registration (profile_source "startup:FILE_NAME"), so its first round already
// serves the selected plan. Any other job starts as before (no profile).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/plan/frontier.h"
#include "wattcut/profile/profile.h"
#include "wattcut/profile/rank_aggregation.h"
#include "wattcut/server/http_api.h"

namespace wattcut::server {

struct StartupProfile {
  std::string path;       // as given
  std::string file_name;  // its last component
  std::string csv;        // the file's text: stored with every job that gets it
  std::shared_ptr<const Profile> profile;
  std::vector<DroppedFrequency> warnings;  // frequencies the per-rank aggregation left out
  // Set by ComputeStartupFrontier.
  PlannerSettings planner;  // the settings the frontier was computed with
  std::shared_ptr<const Frontier> frontier;
  std::string frontier_text;  // its stored form (plan/frontier_file.h)
  double compute_seconds = 0;

  int num_stages() const { return profile ? profile->num_stages() : 0; }
  // The job's profile_source: "startup:" + file_name.
  std::string source() const;
};

using StartupProfiles = std::vector<std::shared_ptr<const StartupProfile>>;

// Reads one profile CSV (the stage count is the file's); errors name the file, and the line
// and column where the reader found the problem.
Result<StartupProfile> ReadStartupProfile(const std::string& path);
// Reads every file, and refuses two with the same stage count, naming both.
Result<std::vector<StartupProfile>> ReadStartupProfiles(const std::vector<std::string>& paths);
// Computes `profile`'s frontier with `planner` (num_microbatches must be set) and its stored
// form; every error names the file. The planner's exceptions become errors.
Status ComputeStartupFrontier(StartupProfile& profile, const PlannerSettings& planner);

// The profile a job registered with `pp_degree` and `planner` gets: the one with pp_degree
// stages whose frontier was computed with exactly these settings; nullptr when there is none.
std::shared_ptr<const StartupProfile> MatchStartupProfile(const StartupProfiles& profiles, int pp_degree,
                                                          const PlannerSettings& planner);

}  // namespace wattcut::server
