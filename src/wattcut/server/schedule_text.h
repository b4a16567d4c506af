// The JSON text of the schedules the server sends ranks (Zeus FrequencySchedule):
// {"rank": R, "frequencies": [["forward", 1410], ["backward", 1410], ...]}, one entry per
// instruction of the rank's stage in execution order. Built as text, not as a JSON tree:
// a round answers every rank of a job at once.
#pragma once

#include <string>
#include <vector>

#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/plan/frontier.h"

namespace wattcut::server {

// Per stage, the text of its [[instruction, freq_mhz], ...] list.
using StageSchedules = std::vector<std::string>;

// Every stage's list at frontier point `index`.
StageSchedules PlanStageSchedules(const Frontier& frontier, size_t index);
// One stage's list with every instruction at `freq_mhz`.
std::string UniformStageSchedule(const std::vector<Computation>& stage, int freq_mhz);
// The whole reply for `rank`, around its stage's list.
std::string FrequencyScheduleJson(int rank, const std::string& stage_schedule);

}  // namespace wattcut::server
