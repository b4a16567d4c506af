#include "wattcut/server/schedule_text.h"

#include <utility>

namespace wattcut::server {
namespace {

std::string ListText(const std::vector<std::pair<InstructionKind, int>>& entries) {
  std::string out = "[";
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) out += ',';
    out += "[\"";
    out += InstructionName(entries[i].first);
    out += "\",";
    out += std::to_string(entries[i].second);
    out += ']';
  }
  out += ']';
  return out;
}

}  // namespace

StageSchedules PlanStageSchedules(const Frontier& frontier, size_t index) {
  FrequencyPlan plan = frontier.PlanAt(index);
  StageSchedules schedules;
  for (const auto& stage : plan.stages) {
    std::vector<std::pair<InstructionKind, int>> entries;
    entries.reserve(stage.size());
    for (const PlannedComputation& c : stage) entries.emplace_back(c.kind, c.freq_mhz);
    schedules.push_back(ListText(entries));
  }
  return schedules;
}

std::string UniformStageSchedule(const std::vector<Computation>& stage, int freq_mhz) {
  std::vector<std::pair<InstructionKind, int>> entries;
  entries.reserve(stage.size());
  for (const Computation& c : stage) entries.emplace_back(c.kind, freq_mhz);
  return ListText(entries);
}

std::string FrequencyScheduleJson(int rank, const std::string& stage_schedule) {
  return "{\"rank\":" + std::to_string(rank) + ",\"frequencies\":" + stage_schedule + "}";
}

}  // namespace wattcut::server
