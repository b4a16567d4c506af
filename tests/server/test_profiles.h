// Profiles for the server tests, from wattcut's built-in A100 model, and the plans the
// server should hand out for them (computed here with the real planner).
#pragma once

#include <string>
#include <vector>

#include "wattcut/plan/frontier.h"
#include "wattcut/plan/planner.h"
#include "wattcut/profile/profile.h"

namespace wattcut::testing {

// Frequencies (MHz, descending) the test profiles measure: 1410 down to `floor_mhz`.
std::vector<int> TestFrequencies(int floor_mhz = 1200);
// The modelled profile of `stages` stages as a profile CSV.
std::string TestProfileCsv(int stages, int floor_mhz = 1200);
// Its planner options.
PlannerOptions TestPlannerOptions(int microbatches);
// The frontier the server should compute for TestProfileCsv.
Frontier TestFrontier(int stages, int microbatches, int floor_mhz = 1200);
// A stage's schedule at point `index` as Zeus JSON: [[instruction, freq], ...].
std::string StageScheduleJson(const Frontier& frontier, size_t index, int stage);

}  // namespace wattcut::testing
