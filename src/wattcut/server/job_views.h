// The JSON views of a job that the HTTP API returns (GET /v1/jobs/{id}/frontier, its
// points, the stragglers, the profile warnings). Pure functions of the values they show.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/plan/frontier.h"
#include "wattcut/profile/rank_aggregation.h"
#include "wattcut/server/energy_saving.h"
#include "wattcut/server/frontier_state.h"
#include "wattcut/server/schedule_decision.h"

namespace wattcut::server {

// A view as the body of an answer: compact, any invalid UTF-8 in a user's text replaced.
std::string AnswerText(const nlohmann::json& view);

// The most points GET /v1/jobs/{id}/frontier/points returns at once.
inline constexpr int64_t kMaxPointsPerPage = 10000;

// "profile_warnings": one object per frequency the rank aggregation left out.
nlohmann::json ProfileWarningsJson(const std::vector<DroppedFrequency>& dropped);
// GET /v1/jobs/{id}/frontier. `frontier` is set when ready; `selected` is the selected
// index; `all_max` the AllMax point (null in the answer when the profile does not give it);
// `error` shown when failed; `note` (when not empty) says why a stored frontier was not used.
nlohmann::json FrontierStatusJson(FrontierState state, const Frontier* frontier, size_t selected,
                                  const std::optional<AllMaxPoint>& all_max, double compute_seconds,
                                  const std::string& error, const std::string& note);
// GET /v1/jobs/{id}/frontier/points: points [offset, offset + min(limit, kMaxPointsPerPage)).
nlohmann::json FrontierPointsJson(const Frontier& frontier, int64_t offset, int64_t limit);
// The stored frontier summary (jobs.frontier_summary_json) of a ready frontier.
nlohmann::json FrontierSummaryJson(const Frontier& frontier, double compute_seconds);
// [{"dp_rank": D, "iteration_time_s" | "slowdown": V}, ...]
nlohmann::json StragglersJson(const Stragglers& stragglers);

}  // namespace wattcut::server
