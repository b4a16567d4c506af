#include "wattcut/server/job_state_codec.h"

#include <nlohmann/json.hpp>

#include "wattcut/base/json_object.h"
#include "wattcut/base/json_preview.h"
#include "wattcut/server/deployment.h"
#include "wattcut/server/job_views.h"

namespace wattcut::server {

using nlohmann::json;

namespace {

Result<json> ParseRow(std::string_view text, const std::string& row) {
  Result<json> doc = ParseJsonWithoutDuplicateKeys(text);
  if (!doc) return Error::Corruption(row + ": corrupt stored JSON: " + doc.error().message);
  return doc;
}

}  // namespace

std::string EncodeJobState(const JobState& state) {
  json got = json::array();
  for (size_t r = 0; r < state.sweep.got.size(); ++r) {
    if (state.sweep.got[r]) got.push_back(r);
  }
  json doc = json{{"schema_version", kJobStateSchemaVersion},
                  {"round", state.completed_rounds},
                  {"selection", state.selection.ToJson()},
                  {"stragglers", StragglersJson(state.stragglers)},
                  {"frontier_attempts", state.frontier_attempts},
                  {"deployment",
                   {{"version", state.deployment_version},
                    {"apply_from_step", state.deployment_apply_from_step},
                    {"steps_per_s", state.deployment_steps_per_s}}},
                  {"profiling",
                   {{"active", state.sweep.active},
                    {"done", state.sweep.done},
                    {"freqs", state.sweep.freqs_mhz},
                    {"step", state.sweep.step},
                    {"got", got}}}};
  if (state.power_target) doc["power_target"] = state.power_target->ToJson();
  if (state.deadline_schedule) doc["deadline_schedule"] = state.deadline_schedule->ToJson();
  if (!state.measured_gpu_energy.empty()) {
    doc["measured_gpu_energy"] = StoredMeasuredGpuEnergyJson(state.measured_gpu_energy);
  }
  return doc.dump();
}

Result<JobState> DecodeJobState(std::string_view text) {
  auto parsed = ParseRow(text, "job state");
  if (!parsed) return parsed.error();
  const json& doc = *parsed;
  if (!doc.is_object()) return Error::Corruption("job state: expected a JSON object");
  try {
    if (doc.contains("schema_version")) {
      const json& v = doc.at("schema_version");
      if (!v.is_number_integer() || v.get<int64_t>() < 1) {
        return Error::Corruption("job state: schema_version must be an integer >= 1, got " + JsonPreview(v, 40));
      }
      if (v.get<int64_t>() > kJobStateSchemaVersion) {
        return Error::Corruption("job state: schema_version " + v.dump() + " is newer than this server reads (" +
                                 std::to_string(kJobStateSchemaVersion) +
                                 "); it was written by a newer wattcut: run that one, or upgrade");
      }
    }
    JobState state;
    state.completed_rounds = doc.at("round").get<int64_t>();
    if (state.completed_rounds < 0) return Error::Corruption("job state: round must be >= 0");
    if (auto sel = PlanSelection::FromJson(doc.at("selection")); sel) {
      state.selection = *sel;
    } else {
      return Error::Corruption("job state: selection: " + sel.error().message);
    }
    for (const json& entry : doc.at("stragglers")) {
      Straggler st;
      if (entry.contains("slowdown")) {
        st.kind = StragglerReport::Kind::kSlowdown;
        st.value = entry.at("slowdown").get<double>();
      } else {
        st.value = entry.at("iteration_time_s").get<double>();
      }
      state.stragglers[entry.at("dp_rank").get<int>()] = st;
    }
    state.frontier_attempts = doc.value("frontier_attempts", 0);
    if (auto it = doc.find("deployment"); it != doc.end()) {  // absent before issue 12
      state.deployment_version = it->at("version").get<uint64_t>();
      state.deployment_apply_from_step = it->at("apply_from_step").get<int64_t>();
      if (state.deployment_apply_from_step < 0 || state.deployment_apply_from_step > 2 * kMaxTrainingStep + 1) {
        return Error::Corruption("job state: deployment.apply_from_step " +
                                 std::to_string(state.deployment_apply_from_step) + " is outside [0, 2^51 + 1]");
      }
      state.deployment_steps_per_s = it->value("steps_per_s", 0.0);
    }
    if (auto it = doc.find("power_target"); it != doc.end() && !it->is_null()) {  // absent before issue 17
      auto target = PowerTarget::FromJson(*it);
      if (!target) return Error::Corruption("job state: power_target: " + target.error().message);
      state.power_target = std::move(*target);
    }
    if (auto it = doc.find("deadline_schedule"); it != doc.end() && !it->is_null()) {  // absent before issue 32
      auto spec = DeadlineScheduleSpec::FromJson(*it);
      if (!spec) return Error::Corruption("job state: deadline_schedule: " + spec.error().message);
      state.deadline_schedule = std::move(*spec);
    }
    if (auto it = doc.find("measured_gpu_energy"); it != doc.end() && !it->is_null()) {
      auto measured = StoredMeasuredGpuEnergyFromJson(*it);
      if (!measured) return Error::Corruption("job state: measured_gpu_energy: " + measured.error().message);
      state.measured_gpu_energy = std::move(*measured);
    }
    const json& prof = doc.at("profiling");
    state.sweep.active = prof.at("active").get<bool>();
    state.sweep.done = prof.at("done").get<bool>();
    state.sweep.freqs_mhz = prof.at("freqs").get<std::vector<int>>();
    state.sweep.step = prof.at("step").get<size_t>();
    for (const json& r : prof.at("got")) {
      size_t rank = r.get<size_t>();
      if (rank >= state.sweep.got.size()) state.sweep.got.resize(rank + 1, 0);
      state.sweep.got[rank] = 1;
    }
    return state;
  } catch (const json::exception& e) {
    return Error::Corruption(std::string("job state: ") + e.what());
  }
}

Result<DecodedJob> DecodeStoredJob(const StoredJob& s) {
  DecodedJob job;
  auto info = ParseRow(s.info_json, "job info");
  if (!info) return info.error();
  auto reg = JobRegistrationFromJson(*info);
  if (!reg) return Error::Corruption("job info: " + reg.error().message);
  job.info = reg->info;
  job.info.job_id = s.job_id;
  auto planner_json = ParseRow(s.planner_json, "planner settings");
  if (!planner_json) return planner_json.error();
  auto planner = PlannerSettingsFromJson(*planner_json);
  if (!planner) return Error::Corruption("planner settings: " + planner.error().message);
  job.planner = *planner;
  const size_t ws = static_cast<size_t>(job.info.world_size);
  job.ranks.resize(ws);
  job.rank_profiles.resize(ws);
  job.has_result.assign(ws, 0);
  for (const auto& [rank, text] : s.ranks) {
    const std::string row = "rank " + std::to_string(rank);
    auto parsed = ParseRow(text, row);
    if (!parsed) return parsed.error();
    auto r = RankInfoFromJson(*parsed);
    if (!r) return Error::Corruption(row + ": " + r.error().message);
    if (rank < 0 || static_cast<size_t>(rank) >= ws || r->rank != rank) {
      return Error::Corruption("rank row " + std::to_string(rank) + " is out of range or mislabelled");
    }
    job.ranks[static_cast<size_t>(rank)] = *r;
  }
  for (const auto& [rank, text] : s.results) {
    if (rank >= 0 && static_cast<size_t>(rank) < ws) job.has_result[static_cast<size_t>(rank)] = 1;
  }
  for (const auto& [rank, text] : s.rank_profiles) {
    const std::string row = "rank profile " + std::to_string(rank);
    auto parsed = ParseRow(text, row);
    if (!parsed) return parsed.error();
    auto p = RankProfileFromJson(*parsed);
    if (!p) return Error::Corruption(row + ": " + p.error().message);
    if (rank < 0 || static_cast<size_t>(rank) >= ws) {
      return Error::Corruption("rank profile row " + std::to_string(rank) + " is out of range");
    }
    job.rank_profiles[static_cast<size_t>(rank)] = *p;
  }
  auto state = DecodeJobState(s.state_json);
  if (!state) return state.error();
  job.state = std::move(*state);
  return job;
}

}  // namespace wattcut::server
