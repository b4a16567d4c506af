// A planned job on a real `wattcut serve` (server_process.h), for the tests of what a job's
// ranks are deployed: pp 2 x dp 2, 4 microbatches, the test profile (test_profiles.h), its
// frontier ready; and every rank's GET /deployment.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace wattcut::testing {

inline constexpr int kPlannedPp = 2, kPlannedDp = 2, kPlannedWorld = kPlannedPp * kPlannedDp, kPlannedMicrobatches = 4;

// Registers the job and its ranks, uploads the profile and waits for the frontier; the job's id
// encoded for a path.
std::string RegisterPlannedJob(httplib::Client& c);

// Every rank's GET /deployment after `step` steps, running `version`.
std::vector<nlohmann::json> FetchAll(httplib::Client& c, const std::string& path, int step, uint64_t version);

}  // namespace wattcut::testing
