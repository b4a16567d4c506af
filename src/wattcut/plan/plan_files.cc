#include "wattcut/plan/plan_files.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <sstream>

#include "wattcut/base/general_text.h"
#include "wattcut/base/json_object.h"
#include "wattcut/plan/plan_lookup.h"

namespace wattcut {

std::string PlanFileStem(size_t index) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%05zu", index);
  return buffer;
}

std::string FrontierCsv(const DurationFrontier& frontier) {
  std::string out =
      "plan,time,energy,duration_units,effective_energy,avg_power_w,avg_power_per_gpu_w,peak_1s_power_w\n";
  for (size_t i = 0; i < frontier.points().size(); ++i) {
    const FrontierPoint& p = frontier.points()[i];
    out += std::to_string(i) + ',' + GeneralText(p.time_s) + ',' + GeneralText(p.energy_j) + ',' +
           std::to_string(p.duration_units) + ',' + GeneralText(p.effective_energy_j) + ',' +
           GeneralText(AveragePowerW(p)) + ',' +
           (frontier.num_devices() > 0 ? GeneralText(AveragePowerPerGpuW(frontier, i)) : std::string()) + ',' +
           (p.peak_1s_power_w ? GeneralText(*p.peak_1s_power_w) : std::string()) + '\n';
  }
  return out;
}

std::string PlanJson(const Frontier& frontier, size_t index) {
  const FrontierPoint& point = frontier.points().at(index);
  FrequencyPlan plan = frontier.PlanAt(index);
  nlohmann::json stages = nlohmann::json::array();
  // With several model chunks per device (interleaved), each entry also names its chunk.
  const bool chunks = ScheduleChunks(frontier.setup().schedule) > 1;
  for (const auto& stage : plan.stages) {
    nlohmann::json list = nlohmann::json::array();
    for (const PlannedComputation& c : stage) {
      if (chunks) {
        list.push_back({InstructionName(c.kind), c.microbatch, c.freq_mhz, c.duration_units, c.chunk});
      } else {
        list.push_back({InstructionName(c.kind), c.microbatch, c.freq_mhz, c.duration_units});
      }
    }
    stages.push_back(std::move(list));
  }
  nlohmann::json doc = {{"format", "wattcut.frequency_plan/v1"},
                        {"point", index},
                        {"time_s", point.time_s},
                        {"energy_j", point.energy_j},
                        {"unit_time_s", frontier.setup().unit_time_s},
                        {"stages", std::move(stages)}};
  return doc.dump() + "\n";
}

std::string DagPlanJson(const DagFrontier& frontier, size_t index) {
  const FrontierPoint& point = frontier.points().at(index);
  const std::vector<int64_t> durations = frontier.DurationsAt(index);
  nlohmann::json knobs = nlohmann::json::object();
  nlohmann::json units = nlohmann::json::object();
  const auto& operations = frontier.setup().operations;
  for (size_t op = 0; op < operations.size(); ++op) {
    knobs[operations[op].name] = frontier.KnobFor(static_cast<int>(op), durations[op]);
    units[operations[op].name] = durations[op];
  }
  nlohmann::json doc = {{"format", kDagPlanFormat},
                        {"point", index},
                        {"time_s", point.time_s},
                        {"energy_j", point.energy_j},
                        {"unit_time_s", frontier.setup().unit_time_s},
                        {"knobs", std::move(knobs)},
                        {"duration_units", std::move(units)}};
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string ZeusPlanLiteral(const FrequencyPlan& plan) {
  std::ostringstream out;
  out << "[\n";
  for (const auto& stage : plan.stages) {
    out << "    [";
    for (size_t i = 0; i < stage.size(); ++i) {
      if (i > 0) out << ", ";
      out << "(\"" << InstructionName(stage[i].kind) << "\", " << stage[i].freq_mhz << ")";
    }
    out << "],\n";
  }
  out << "]\n";
  return out.str();
}

Result<StoredPlan> ParsePlanJson(const std::string& text, const std::string& source_name) {
  nlohmann::json doc = ParseJsonOrDiscarded(text);
  if (doc.is_discarded()) return Error{source_name + ": not valid JSON"};
  auto field_error = [&](const std::string& field, const std::string& expected) {
    return Error{source_name + ": field '" + field + "': expected " + expected};
  };
  if (!doc.is_object()) return Error{source_name + ": expected a JSON object"};
  if (doc.value("format", "") != "wattcut.frequency_plan/v1") {
    return field_error("format", "\"wattcut.frequency_plan/v1\"");
  }
  StoredPlan stored;
  for (const char* key : {"time_s", "energy_j", "unit_time_s"}) {
    if (!doc.contains(key) || !doc[key].is_number()) return field_error(key, "a number");
  }
  if (!doc.contains("point") || !doc["point"].is_number_unsigned()) return field_error("point", "an index >= 0");
  stored.point = doc["point"].get<size_t>();
  stored.time_s = doc["time_s"].get<double>();
  stored.energy_j = doc["energy_j"].get<double>();
  stored.unit_time_s = doc["unit_time_s"].get<double>();
  if (!doc.contains("stages") || !doc["stages"].is_array()) return field_error("stages", "a list of stages");
  for (size_t s = 0; s < doc["stages"].size(); ++s) {
    const auto& stage = doc["stages"][s];
    std::string where = "stages[" + std::to_string(s) + "]";
    if (!stage.is_array()) return field_error(where, "a list of computations");
    auto& out = stored.plan.stages.emplace_back();
    for (size_t i = 0; i < stage.size(); ++i) {
      const auto& c = stage[i];
      std::string at = where + "[" + std::to_string(i) + "]";
      if (!c.is_array() || (c.size() != 4 && c.size() != 5) || !c[0].is_string() || !c[1].is_number_integer() ||
          !c[2].is_number_integer() || !c[3].is_number_integer() || (c.size() == 5 && !c[4].is_number_integer())) {
        return field_error(at, "[instruction, microbatch, freq_mhz, duration_units] or [..., chunk]");
      }
      auto kind = ParseInstruction(c[0].get<std::string>());
      if (!kind) return field_error(at + "[0]", std::string(InstructionNameList()));
      const int chunk = c.size() == 5 ? c[4].get<int>() : 0;
      if (chunk < 0) return field_error(at + "[4]", "a chunk >= 0");
      out.push_back(PlannedComputation{*kind, c[1].get<int>(), c[2].get<int>(), c[3].get<int64_t>(), chunk});
    }
  }
  return stored;
}

}  // namespace wattcut
