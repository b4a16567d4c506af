#include "tests/server/zeus_client.h"

#include <nlohmann/json.hpp>

namespace zeus_shapes {

using nlohmann::json;

Client::Client(const std::string& host, int port) : http_(host, port) {
  http_.set_read_timeout(3600, 0);
  http_.set_connection_timeout(60, 0);
}

std::optional<std::string> Client::RegisterJob(const JobInfo& info) {
  // pydantic's JobInfo.json(): job_id "" when sent to the server.
  json body = {{"job_id", ""},
               {"pp_degree", info.pp_degree},
               {"dp_degree", info.dp_degree},
               {"tp_degree", info.tp_degree},
               {"world_size", info.world_size},
               {"job_metadata", info.job_metadata ? json(*info.job_metadata) : json(nullptr)}};
  auto res = http_.Post("/register_job", body.dump(), "application/json");
  if (!res || res->status != 200) {
    last_error_ = res ? res->body : "no response";
    return std::nullopt;
  }
  json id = json::parse(res->body, nullptr, false);
  if (!id.is_string()) return std::nullopt;
  return id.get<std::string>();
}

bool Client::RegisterRank(const std::string& job_id, const RankInfo& info) {
  json body = {{"rank", info.rank},
               {"dp_rank", info.dp_rank},
               {"pp_rank", info.pp_rank},
               {"tp_rank", info.tp_rank},
               {"available_frequencies", info.available_frequencies}};
  auto res = http_.Post("/register_rank/" + job_id, body.dump(), "application/json");
  if (!res || res->status != 200) last_error_ = res ? res->body : "no response";
  return res && res->status == 200;
}

std::optional<FrequencySchedule> Client::GetSchedule(const std::string& job_id, int rank) {
  auto res = http_.Get("/schedule/" + job_id + "?rank=" + std::to_string(rank));
  if (!res || res->status != 200) {
    last_error_ = res ? res->body : "no response";
    return std::nullopt;
  }
  json body = json::parse(res->body, nullptr, false);
  if (!body.is_object() || !body.contains("rank") || !body.contains("frequencies")) {
    return std::nullopt;
  }
  FrequencySchedule schedule;
  schedule.rank = body["rank"].get<int>();
  for (const json& entry : body["frequencies"]) {
    // list[tuple[str, int]]
    schedule.frequencies.emplace_back(entry.at(0).get<std::string>(), entry.at(1).get<int>());
  }
  return schedule;
}

bool Client::ReportResult(const std::string& job_id, const ProfilingResult& result) {
  json time = json::object();
  for (const auto& [k, v] : result.time_breakdown) time[k] = v;
  json energy = json::object();
  for (const auto& [k, v] : result.energy_breakdown) energy[k] = v;
  json body = {{"rank", result.rank},
               {"iter_time", result.iter_time},
               {"iter_energy", result.iter_energy},
               {"time_breakdown", time},
               {"energy_breakdown", energy}};
  auto res = http_.Post("/result/" + job_id, body.dump(), "application/json");
  if (!res || res->status != 200) last_error_ = res ? res->body : "no response";
  return res && res->status == 200;
}

}  // namespace zeus_shapes
