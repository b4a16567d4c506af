// A deadline schedule (deadline_scheduler.h) as the JSON `wattcut plan schedule` writes, format
// "wattcut.deadline_schedule/v1" (docs/deadline.md):
//
//   {"format", "objective", "start", "start_s", "deadline", "deadline_s", "iterations",
//    "inputs": {...the caller's description of its files...},
//    "totals": {"finish", "finish_s", "iterations", "energy_kwh", "cost", "carbon_kg"},
//    "baselines": {"fastest": {...totals, "available", "note"}, "least_energy": {...}},
//    "saving": {"vs_fastest", "vs_least_energy"}   the objective's, as fractions (null: n/a),
//    "intervals": [{"start", "start_s", "end", "end_s", "price", "carbon", "budget_w",
//                   "plans": [{"point", "seconds", "iterations", "iterations_per_s", "power_w"}],
//                   "iterations", "energy_kwh", "cost", "carbon_kg", "progress"}],
//    "notes": [...]}
//
// Times are ISO 8601 UTC and seconds since 1970; a value the inputs do not give is null.
#pragma once

#include <nlohmann/json.hpp>

#include "wattcut/deadline/deadline_scheduler.h"

namespace wattcut::deadline {

inline constexpr const char* kScheduleFormat = "wattcut.deadline_schedule/v1";

// `inputs` goes into the document as given.
nlohmann::json ScheduleJson(const Schedule& schedule, const ScheduleRequest& request, const nlohmann::json& inputs);

}  // namespace wattcut::deadline
