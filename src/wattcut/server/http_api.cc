#include "wattcut/server/http_api.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <limits>
#include <tuple>
#include <utility>

#include "wattcut/base/general_text.h"
#include "wattcut/base/json_object.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/plan/planning_limits.h"
#include "wattcut/profile/cost_model.h"
#include "wattcut/server/json_fields.h"

namespace wattcut::server {

using nlohmann::json;

namespace {

Result<std::map<std::string, std::vector<std::vector<double>>>> Breakdown(const json& object, const std::string& name) {
  std::map<std::string, std::vector<std::vector<double>>> out;
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return out;
  if (!it->is_object()) {
    return kRequestFields.Expected({&*it, name}, "an object of instruction -> list of lists");
  }
  for (const auto& [key, value] : it->items()) {
    const std::string path = name + "." + PrintableText(key, 64);
    if (!value.is_array()) return Error{"field '" + path + "': expected a list of lists of numbers"};
    std::vector<std::vector<double>> iterations;
    for (size_t i = 0; i < value.size(); ++i) {
      auto list = NumberList(value[i], path + "[" + std::to_string(i) + "]");
      if (!list) return list.error();
      iterations.push_back(std::move(*list));
    }
    out[key] = std::move(iterations);
  }
  return out;
}

// {"1410": 0.01, ...}: frequency (MHz, as a JSON object key) -> non-negative number.
Result<std::map<int, double>> FrequencyMap(const json& object, const std::string& name) {
  auto it = object.find(name);
  if (it == object.end()) return Error{"field '" + name + "' is required"};
  if (!it->is_object()) {
    return kRequestFields.Expected({&*it, name}, "an object of frequency (MHz) -> number");
  }
  std::map<int, double> out;
  for (const auto& [key, value] : it->items()) {
    auto freq = ParseNonNegativeInteger(name + " key", key);
    if (!freq || *freq < 1 || *freq > 100000) {
      return Error{"field '" + name + "': key '" + PrintableText(key, 64) +
                   "' is not a frequency in MHz (an integer in [1, 100000])"};
    }
    auto v = NumberValue(value, name + "." + key);
    if (!v) return v.error();
    if (*v < 0) return Error{"field '" + name + "." + key + "': must not be negative"};
    out[static_cast<int>(*freq)] = *v;
  }
  return out;
}

constexpr int kMaxDegree = 1 << 20;

// Reads rank, dp_rank, pp_rank and tp_rank, which RankInfo and RankProfile share.
template <typename RankRecord>
Status ReadRankIds(const json& j, RankRecord& out) {
  auto rank = IntField(j, "rank", 0, kMaxDegree);
  if (!rank) return rank.error();
  auto dp = IntField(j, "dp_rank", 0, kMaxDegree);
  if (!dp) return dp.error();
  auto pp = IntField(j, "pp_rank", 0, kMaxDegree);
  if (!pp) return pp.error();
  auto tp = IntField(j, "tp_rank", 0, kMaxDegree);
  if (!tp) return tp.error();
  out.rank = *rank;
  out.dp_rank = *dp;
  out.pp_rank = *pp;
  out.tp_rank = *tp;
  return Status::Ok();
}

}  // namespace

Result<json> ParseJsonBody(std::string_view body) {
  if (body.empty()) return Error::Malformed("request body is empty; expected JSON");
  return ParseJsonWithoutDuplicateKeys(body);
}

Result<JobRegistration> JobRegistrationFromJson(const json& j) {
  if (auto s = RequireObject(j, "JobInfo"); !s) return s.error();
  JobRegistration reg;
  if (auto it = j.find("job_id"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return kRequestFields.Expected({&*it, "job_id"}, "a string");
    if (!it->get<std::string>().empty()) {
      return Error{"field 'job_id': must be empty when registering; the server assigns it"};
    }
  }
  // A pipeline the planner cannot plan is refused here, before the job exists.
  auto pp = IntField(j, "pp_degree", 1, kMaxStages);
  if (!pp) return pp.error();
  auto dp = IntField(j, "dp_degree", 1, kMaxDegree);
  if (!dp) return dp.error();
  auto tp = IntField(j, "tp_degree", 1, kMaxDegree);
  if (!tp) return tp.error();
  auto ws = IntField(j, "world_size", 1, kMaxDegree);
  if (!ws) return ws.error();
  int64_t product = int64_t{*pp} * *dp * *tp;
  if (product != *ws) {
    return Error{"field 'world_size': " + std::to_string(*ws) +
                 " != pp_degree * dp_degree * tp_degree = " + std::to_string(product)};
  }
  reg.info.pp_degree = *pp;
  reg.info.dp_degree = *dp;
  reg.info.tp_degree = *tp;
  reg.info.world_size = *ws;
  if (auto it = j.find("job_metadata"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) {
      return kRequestFields.Expected({&*it, "job_metadata"}, "a string or null");
    }
    if (it->get<std::string>().size() > 256) {
      return Error{"field 'job_metadata': longer than 256 characters"};
    }
    reg.info.job_metadata = it->get<std::string>();
  }
  if (auto it = j.find("planner"); it != j.end() && !it->is_null()) {
    auto planner = Prefix(PlannerSettingsFromJson(*it), "field 'planner'");
    if (!planner) return planner.error();
    reg.planner = *planner;
  }
  return reg;
}

Result<RankInfo> RankInfoFromJson(const json& j) {
  if (auto s = RequireObject(j, "RankInfo"); !s) return s.error();
  RankInfo info;
  if (Status ids = ReadRankIds(j, info); !ids.ok()) return ids.error();
  auto it = j.find("available_frequencies");
  if (it == j.end()) return Error{"field 'available_frequencies' is required"};
  if (!it->is_array()) {
    return kRequestFields.Expected({&*it, "available_frequencies"}, "a list of integers (MHz)");
  }
  if (it->empty()) return Error{"field 'available_frequencies': must not be empty"};
  if (it->size() > 4096) return Error{"field 'available_frequencies': more than 4096 entries"};
  for (size_t i = 0; i < it->size(); ++i) {
    const json& f = (*it)[i];
    if (!f.is_number_integer() || f.get<int64_t>() < 1 || f.get<int64_t>() > 100000) {
      return Error{"field 'available_frequencies[" + std::to_string(i) +
                   "]': expected an integer frequency in MHz in [1, 100000], got " +
                   (f.is_number_integer() ? std::to_string(f.get<int64_t>()) : TypeName(f))};
    }
    info.available_frequencies.push_back(f.get<int>());
  }
  return info;
}

Result<ProfilingResult> ProfilingResultFromJson(const json& j) {
  if (auto s = RequireObject(j, "ProfilingResult"); !s) return s.error();
  ProfilingResult result;
  auto rank = IntField(j, "rank", 0, kMaxDegree);
  if (!rank) return rank.error();
  result.rank = *rank;
  for (const char* name : {"iter_time", "iter_energy"}) {
    auto it = j.find(name);
    if (it == j.end()) return Error{std::string("field '") + name + "' is required"};
    auto list = NumberList(*it, name);
    if (!list) return list.error();
    (std::string(name) == "iter_time" ? result.iter_time : result.iter_energy) = std::move(*list);
  }
  auto time = Breakdown(j, "time_breakdown");
  if (!time) return time.error();
  auto energy = Breakdown(j, "energy_breakdown");
  if (!energy) return energy.error();
  result.time_breakdown = std::move(*time);
  result.energy_breakdown = std::move(*energy);
  return result;
}

Result<RankProfile> RankProfileFromJson(const json& j) {
  if (auto s = RequireObject(j, "OfflineProfilingResult"); !s) return s.error();
  RankProfile p;
  if (Status ids = ReadRankIds(j, p); !ids.ok()) return ids.error();
  struct Slot {
    const char* name;
    std::map<int, double>* target;
  };
  const Slot split[] = {
      Slot{"backward_input_time", &p.backward_input_time}, Slot{"backward_input_energy", &p.backward_input_energy},
      Slot{"backward_weight_time", &p.backward_weight_time}, Slot{"backward_weight_energy", &p.backward_weight_energy}};
  // The split backward (a zero-bubble rank's B and W passes) is all four maps or none; with
  // it, the whole backward's maps are optional.
  const bool has_split =
      std::any_of(std::begin(split), std::end(split), [&](const Slot& slot) { return j.contains(slot.name); });
  std::vector<Slot> slots = {Slot{"forward_time", &p.forward_time}, Slot{"forward_energy", &p.forward_energy}};
  if (!has_split || j.contains("backward_time") || j.contains("backward_energy")) {
    slots.push_back(Slot{"backward_time", &p.backward_time});
    slots.push_back(Slot{"backward_energy", &p.backward_energy});
  }
  if (has_split) slots.insert(slots.end(), std::begin(split), std::end(split));
  for (Slot slot : slots) {
    auto map = FrequencyMap(j, slot.name);
    if (!map) return map.error();
    *slot.target = std::move(*map);
  }
  auto same_keys = [](const std::map<int, double>& a, const std::map<int, double>& b) {
    if (a.size() != b.size()) return false;
    for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
      if (ia->first != ib->first) return false;
    }
    return true;
  };
  if (p.forward_time.empty()) return Error{"field 'forward_time' must hold at least one frequency"};
  if (!has_split && p.backward_time.empty()) {
    return Error{
        "field 'backward_time' must hold at least one frequency (or send the split backward: "
        "'backward_input_time', 'backward_input_energy', 'backward_weight_time' and "
        "'backward_weight_energy')"};
  }
  if (has_split && p.backward_input_time.empty()) {
    return Error{"field 'backward_input_time' must hold at least one frequency"};
  }
  const struct {
    const char* a;
    const char* b;
    const std::map<int, double>& first;
    const std::map<int, double>& second;
  } pairs[] = {{"forward_time", "forward_energy", p.forward_time, p.forward_energy},
               {"backward_time", "backward_energy", p.backward_time, p.backward_energy},
               {"backward_input_time", "backward_input_energy", p.backward_input_time, p.backward_input_energy},
               {"backward_weight_time", "backward_weight_energy", p.backward_weight_time, p.backward_weight_energy},
               {"backward_input_time", "backward_weight_time", p.backward_input_time, p.backward_weight_time}};
  for (const auto& pair : pairs) {
    if (!same_keys(pair.first, pair.second)) {
      return Error{std::string("fields '") + pair.a + "' and '" + pair.b + "' must have the same frequencies" +
                   (std::string(pair.b) == "backward_weight_time"
                        ? " (each frequency of a split backward needs both its passes)"
                        : "")};
    }
  }
  return p;
}

Result<ProfileUpload> ProfileUploadFromJson(const json& j) {
  if (auto s = RequireObject(j, "profile upload"); !s) return s.error();
  ProfileUpload upload;
  auto it = j.find("csv");
  if (it == j.end()) return Error{"field 'csv' is required (the profile CSV text)"};
  if (!it->is_string()) return kRequestFields.Expected({&*it, "csv"}, "a string");
  upload.csv = it->get<std::string>();
  if (upload.csv.empty()) return Error{"field 'csv': must not be empty"};
  if (auto p = j.find("planner"); p != j.end() && !p->is_null()) {
    auto planner = Prefix(PlannerSettingsFromJson(*p), "field 'planner'");
    if (!planner) return planner.error();
    upload.planner = *planner;
  }
  return upload;
}

Result<StragglerReport> StragglerReportFromJson(const json& j) {
  if (auto s = RequireObject(j, "straggler report"); !s) return s.error();
  if (auto s = RefuseUnknownFields(j, {"dp_rank", "iteration_time_s", "slowdown", "recovered"}); !s) return s.error();
  StragglerReport report;
  auto dp = IntField(j, "dp_rank", 0, kMaxDegree);
  if (!dp) return dp.error();
  report.dp_rank = *dp;
  int given = 0;
  if (auto it = j.find("iteration_time_s"); it != j.end() && !it->is_null()) {
    auto v = NumberValue(*it, "iteration_time_s");
    if (!v) return v.error();
    if (*v <= 0) return Error{"field 'iteration_time_s': must be positive"};
    report.kind = StragglerReport::Kind::kIterationTime;
    report.value = *v;
    ++given;
  }
  if (auto it = j.find("slowdown"); it != j.end() && !it->is_null()) {
    auto v = NumberValue(*it, "slowdown");
    if (!v) return v.error();
    if (*v < 1 || *v > 1000) return Error{"field 'slowdown': must be in [1, 1000]"};
    report.kind = StragglerReport::Kind::kSlowdown;
    report.value = *v;
    ++given;
  }
  if (auto it = j.find("recovered"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean() || !it->get<bool>()) {
      return Error{"field 'recovered': expected true (omit it otherwise)"};
    }
    report.kind = StragglerReport::Kind::kRecovered;
    ++given;
  }
  if (given != 1) {
    return Error{"give exactly one of 'iteration_time_s', 'slowdown' or 'recovered': true"};
  }
  return report;
}

json ToJson(const JobInfo& info) {
  json j = {{"job_id", info.job_id},
            {"pp_degree", info.pp_degree},
            {"dp_degree", info.dp_degree},
            {"tp_degree", info.tp_degree},
            {"world_size", info.world_size}};
  j["job_metadata"] = info.job_metadata ? json(*info.job_metadata) : json(nullptr);
  return j;
}

json ToJson(const RankInfo& info) {
  return {{"rank", info.rank},
          {"dp_rank", info.dp_rank},
          {"pp_rank", info.pp_rank},
          {"tp_rank", info.tp_rank},
          {"available_frequencies", info.available_frequencies}};
}

json ToJson(const RankProfile& p) {
  auto map = [](const std::map<int, double>& m) {
    json out = json::object();
    for (const auto& [f, v] : m) out[std::to_string(f)] = v;
    return out;
  };
  json out = {{"rank", p.rank},
              {"dp_rank", p.dp_rank},
              {"pp_rank", p.pp_rank},
              {"tp_rank", p.tp_rank},
              {"forward_time", map(p.forward_time)},
              {"forward_energy", map(p.forward_energy)},
              {"backward_time", map(p.backward_time)},
              {"backward_energy", map(p.backward_energy)}};
  // The split only when measured: a Zeus-shaped profile stays as it was.
  if (p.has_split_backward()) {
    out["backward_input_time"] = map(p.backward_input_time);
    out["backward_input_energy"] = map(p.backward_input_energy);
    out["backward_weight_time"] = map(p.backward_weight_time);
    out["backward_weight_energy"] = map(p.backward_weight_energy);
  }
  return out;
}

json ToJson(const ProfilingResult& r) {
  return {{"rank", r.rank},
          {"iter_time", r.iter_time},
          {"iter_energy", r.iter_energy},
          {"time_breakdown", r.time_breakdown},
          {"energy_breakdown", r.energy_breakdown}};
}

Result<int64_t> ParseNonNegativeInteger(std::string_view name, std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 0) {
    return Error{"'" + std::string(name) + "': expected a non-negative integer, got '" + PrintableText(text, 64) + "'"};
  }
  return value;
}

}  // namespace wattcut::server
