#include "wattcut/server/job_views.h"

#include <algorithm>

#include "wattcut/plan/plan_lookup.h"

namespace wattcut::server {

std::string AnswerText(const nlohmann::json& view) {
  return view.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

using nlohmann::json;

json ProfileWarningsJson(const std::vector<DroppedFrequency>& dropped) {
  json out = json::array();
  for (const DroppedFrequency& d : dropped) {
    json missing = json::array();
    for (const RankId& r : d.missing_ranks) {
      missing.push_back({{"rank", r.rank}, {"dp_rank", r.dp_rank}, {"tp_rank", r.tp_rank}});
    }
    out.push_back({{"stage", d.stage},
                   {"instruction", std::string(InstructionName(d.kind))},
                   {"freq_mhz", d.freq_mhz},
                   {"missing_ranks", missing},
                   {"stage_ranks", d.num_ranks},
                   {"message", DroppedFrequencyMessage(d)}});
  }
  return out;
}

json FrontierStatusJson(FrontierState state, const Frontier* frontier, size_t selected,
                        const std::optional<AllMaxPoint>& all_max, double compute_seconds, const std::string& error,
                        const std::string& note) {
  json out = {{"state", FrontierStateName(state)}};
  if (state == FrontierState::kFailed) out["error"] = error;
  if (!note.empty()) out["note"] = note;
  if (state == FrontierState::kReady && frontier != nullptr) {
    const auto& points = frontier->points();
    auto point = [&](size_t i) {
      return json{{"index", i}, {"time_s", points[i].time_s}, {"energy_j", points[i].energy_j}};
    };
    out["num_points"] = points.size();
    out["fastest"] = point(frontier->fastest_index());
    out["min_energy"] = point(frontier->min_energy_index());
    out["selected"] = point(selected);
    out["all_max"] = all_max ? json{{"time_s", all_max->time_s}, {"energy_j", all_max->energy_j}} : json(nullptr);
    out["compute_seconds"] = compute_seconds;
  }
  return out;
}

json FrontierPointsJson(const Frontier& frontier, int64_t offset, int64_t limit) {
  const auto& points = frontier.points();
  limit = std::min<int64_t>(limit, kMaxPointsPerPage);
  json list = json::array();
  for (int64_t i = offset; i < static_cast<int64_t>(points.size()) && i < offset + limit; ++i) {
    const FrontierPoint& p = points[static_cast<size_t>(i)];
    // Power per plan as frontier.csv has it (plan/plan_lookup.h); the peak is null in a
    // frontier stored before the server computed it.
    list.push_back({{"index", i},
                    {"duration_units", p.duration_units},
                    {"time_s", p.time_s},
                    {"energy_j", p.energy_j},
                    {"effective_energy_j", p.effective_energy_j},
                    {"avg_power_w", AveragePowerW(p)},
                    {"avg_power_per_gpu_w", AveragePowerPerGpuW(frontier, static_cast<size_t>(i))},
                    {"peak_1s_power_w", p.peak_1s_power_w ? json(*p.peak_1s_power_w) : json(nullptr)}});
  }
  return json{{"total", points.size()}, {"offset", offset}, {"points", list}};
}

json FrontierSummaryJson(const Frontier& frontier, double compute_seconds) {
  const auto& points = frontier.points();
  size_t fastest = frontier.fastest_index();
  size_t min_energy = frontier.min_energy_index();
  return json{{"num_points", points.size()},
              {"fastest_time_s", points[fastest].time_s},
              {"fastest_energy_j", points[fastest].energy_j},
              {"min_energy_time_s", points[min_energy].time_s},
              {"min_energy_j", points[min_energy].energy_j},
              {"compute_seconds", compute_seconds}};
}

json StragglersJson(const Stragglers& stragglers) {
  json out = json::array();
  for (const auto& [dp, s] : stragglers) {
    json entry = {{"dp_rank", dp}};
    entry[s.kind == StragglerReport::Kind::kSlowdown ? "slowdown" : "iteration_time_s"] = s.value;
    out.push_back(entry);
  }
  return out;
}

}  // namespace wattcut::server
