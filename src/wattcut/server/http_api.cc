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

namespace wattcut::server {

using nlohmann::json;

namespace {

std::string TypeName(const json& value) {
  if (value.is_number_integer()) return "integer";
  if (value.is_number_float()) return "number";
  return value.type_name();
}

// A short rendering of a user value for messages: never recursive, never long, no control
// bytes.
std::string Shown(const json& value) {
  if (value.is_string()) {
    return "\"" + PrintableText(value.get_ref<const std::string&>(), 64) + "\"";
  }
  return TypeName(value);
}

Status RequireObject(const json& value, const std::string& what) {
  if (!value.is_object()) {
    return Error{what + ": expected a JSON object, got " + TypeName(value)};
  }
  return Status::Ok();
}

// Reads an integer field in [min, max]. `required` false returns `fallback` when absent.
Result<int> IntField(const json& object, const std::string& name, int min, int max,
                     std::optional<int> fallback = std::nullopt) {
  auto it = object.find(name);
  if (it == object.end() || (it->is_null() && fallback)) {
    if (fallback) return *fallback;
    return Error{"field '" + name + "' is required"};
  }
  if (!it->is_number_integer()) {
    return Error{"field '" + name + "': expected an integer, got " + TypeName(*it)};
  }
  // Compare as the widest integer type so that huge values do not wrap.
  if (it->is_number_unsigned()) {
    uint64_t v = it->get<uint64_t>();
    // nlohmann holds every non-negative integer as unsigned: the lower bound applies here too.
    if (v > static_cast<uint64_t>(max) || (min > 0 && v < static_cast<uint64_t>(min))) {
      return Error{"field '" + name + "': " + std::to_string(v) + " is out of range [" + std::to_string(min) + ", " +
                   std::to_string(max) + "]"};
    }
    return static_cast<int>(v);
  }
  int64_t v = it->get<int64_t>();
  if (v < min || v > max) {
    return Error{"field '" + name + "': " + std::to_string(v) + " is out of range [" + std::to_string(min) + ", " +
                 std::to_string(max) + "]"};
  }
  return static_cast<int>(v);
}

Result<double> NumberValue(const json& value, const std::string& what) {
  if (!value.is_number()) {
    return Error{what + ": expected a number, got " + TypeName(value)};
  }
  double v = value.get<double>();
  if (!std::isfinite(v)) return Error{what + ": expected a finite number"};
  return v;
}

Result<double> NumberField(const json& object, const std::string& name, std::optional<double> fallback = std::nullopt) {
  auto it = object.find(name);
  if (it == object.end() || (it->is_null() && fallback)) {
    if (fallback) return *fallback;
    return Error{"field '" + name + "' is required"};
  }
  return NumberValue(*it, "field '" + name + "'");
}

Result<std::vector<double>> NumberList(const json& value, const std::string& what) {
  if (!value.is_array()) return Error{what + ": expected a list of numbers, got " + TypeName(value)};
  std::vector<double> out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    auto v = NumberValue(value[i], what + "[" + std::to_string(i) + "]");
    if (!v) return v.error();
    out.push_back(*v);
  }
  return out;
}

Result<std::map<std::string, std::vector<std::vector<double>>>> Breakdown(const json& object, const std::string& name) {
  std::map<std::string, std::vector<std::vector<double>>> out;
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return out;
  if (!it->is_object()) {
    return Error{"field '" + name + "': expected an object of instruction -> list of lists, got " + TypeName(*it)};
  }
  for (const auto& [key, value] : it->items()) {
    std::string what = "field '" + name + "." + PrintableText(key, 64) + "'";
    if (!value.is_array()) return Error{what + ": expected a list of lists of numbers"};
    std::vector<std::vector<double>> iterations;
    for (size_t i = 0; i < value.size(); ++i) {
      auto list = NumberList(value[i], what + "[" + std::to_string(i) + "]");
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
    return Error{"field '" + name + "': expected an object of frequency (MHz) -> number, got " + TypeName(*it)};
  }
  std::map<int, double> out;
  for (const auto& [key, value] : it->items()) {
    auto freq = ParseNonNegativeInteger(name + " key", key);
    if (!freq || *freq < 1 || *freq > 100000) {
      return Error{"field '" + name + "': key '" + PrintableText(key, 64) +
                   "' is not a frequency in MHz (an integer in [1, 100000])"};
    }
    auto v = NumberValue(value, "field '" + name + "." + key + "'");
    if (!v) return v.error();
    if (*v < 0) return Error{"field '" + name + "." + key + "': must not be negative"};
    out[static_cast<int>(*freq)] = *v;
  }
  return out;
}

template <typename T>
Result<T> Prefix(Result<T> result, const std::string& what) {
  if (result) return result;
  return Error{what + ": " + result.error().message};
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

PlannerOptions PlannerSettings::ToPlannerOptions() const {
  PlannerOptions options;
  options.num_microbatches = num_microbatches;
  options.schedule = schedule;
  options.virtual_stages = virtual_stages;
  options.unit_time_s = unit_time_s;
  options.noise_factor = noise_factor;
  options.cost_model = cost_model;
  options.p2p_power_w = p2p_power_w;
  return options;
}

Result<json> ParseJsonBody(std::string_view body) {
  if (body.empty()) return Error::Malformed("request body is empty; expected JSON");
  return ParseJsonWithoutDuplicateKeys(body);
}

Result<JobRegistration> JobRegistrationFromJson(const json& j) {
  if (auto s = RequireObject(j, "JobInfo"); !s) return s.error();
  JobRegistration reg;
  if (auto it = j.find("job_id"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return Error{"field 'job_id': expected a string, got " + TypeName(*it)};
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
      return Error{"field 'job_metadata': expected a string or null, got " + TypeName(*it)};
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
    return Error{"field 'available_frequencies': expected a list of integers (MHz), got " + TypeName(*it)};
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
    auto list = NumberList(*it, std::string("field '") + name + "'");
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

Result<PlannerSettings> PlannerSettingsFromJson(const json& j) {
  if (auto s = RequireObject(j, "planner settings"); !s) return s.error();
  PlannerSettings settings;
  auto m = IntField(j, "num_microbatches", 1, kMaxMicrobatches, 0);
  if (!m) return m.error();
  settings.num_microbatches = *m;
  if (auto it = j.find("schedule"); it != j.end() && !it->is_null()) {
    std::string name = it->is_string() ? it->get<std::string>() : std::string();
    Result<PipelineScheduleKind> schedule = ParsePipelineSchedule(name);
    if (!schedule) {
      return Error{"field 'schedule': expected \"1f1b\", \"gpipe\", \"interleaved\" or \"zb-h1\", got " + Shown(*it)};
    }
    settings.schedule = *schedule;
  }
  auto chunks = IntField(j, "virtual_stages", 1, kMaxStages, 1);
  if (!chunks) return chunks.error();
  settings.virtual_stages = *chunks;
  if (auto it = j.find("cost_model"); it != j.end() && !it->is_null()) {
    std::string name = it->is_string() ? it->get<std::string>() : std::string();
    // The CLI's spellings; "convex_hull" is how this API wrote it until 2026-12, still read so
    // that stored jobs and older clients keep working.
    Result<CostModelKind> kind = ParseCostModel(name == "convex_hull" ? "convex-hull" : name);
    if (!kind) {
      return Error{"field 'cost_model': expected \"exponential\" or \"convex-hull\", got " + Shown(*it)};
    }
    settings.cost_model = *kind;
  }
  auto unit = NumberField(j, "unit_time_s", 0.001);
  if (!unit) return unit.error();
  if (*unit <= 0 || *unit > 10) return Error{"field 'unit_time_s': must be in (0, 10]"};
  settings.unit_time_s = *unit;
  auto nf = NumberField(j, "noise_factor", 0.95);
  if (!nf) return nf.error();
  if (*nf <= 0 || *nf > 1) return Error{"field 'noise_factor': must be in (0, 1]"};
  settings.noise_factor = *nf;
  auto p2p = NumberField(j, "p2p_power_w", 0.0);
  if (!p2p) return p2p.error();
  if (*p2p < 0 || *p2p > 100000) return Error{"field 'p2p_power_w': must be in [0, 100000]"};
  settings.p2p_power_w = *p2p;
  auto min_freq = IntField(j, "profiling_min_freq_mhz", 0, 100000, 0);
  if (!min_freq) return min_freq.error();
  settings.profiling_min_freq_mhz = *min_freq;
  return settings;
}

Result<ProfileUpload> ProfileUploadFromJson(const json& j) {
  if (auto s = RequireObject(j, "profile upload"); !s) return s.error();
  ProfileUpload upload;
  auto it = j.find("csv");
  if (it == j.end()) return Error{"field 'csv' is required (the profile CSV text)"};
  if (!it->is_string()) return Error{"field 'csv': expected a string, got " + TypeName(*it)};
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
    auto v = NumberValue(*it, "field 'iteration_time_s'");
    if (!v) return v.error();
    if (*v <= 0) return Error{"field 'iteration_time_s': must be positive"};
    report.kind = StragglerReport::Kind::kIterationTime;
    report.value = *v;
    ++given;
  }
  if (auto it = j.find("slowdown"); it != j.end() && !it->is_null()) {
    auto v = NumberValue(*it, "field 'slowdown'");
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

Result<PlanSelection> PlanSelectionFromJson(const json& j) { return PlanSelection::FromJson(j); }

Result<PlanSelection> PlanSelection::FromJson(const json& j) {
  if (auto s = RequireObject(j, "plan selection"); !s) return s.error();
  if (auto s = RefuseUnknownFields(j, {"point", "index", "iteration_time_s"}); !s) return s.error();
  PlanSelection sel;
  int given = 0;
  if (auto it = j.find("point"); it != j.end() && !it->is_null()) {
    std::string name = it->is_string() ? it->get<std::string>() : std::string();
    if (name == "fastest") {
      sel.kind = Kind::kFastest;
    } else if (name == "min_energy") {
      sel.kind = Kind::kMinEnergy;
    } else {
      return Error{"field 'point': expected \"fastest\" or \"min_energy\", got " + Shown(*it)};
    }
    ++given;
  }
  if (auto it = j.find("index"); it != j.end() && !it->is_null()) {
    auto index = IntField(j, "index", 0, std::numeric_limits<int>::max());
    if (!index) return index.error();
    sel.kind = Kind::kIndex;
    sel.value = *index;
    ++given;
  }
  if (auto it = j.find("iteration_time_s"); it != j.end() && !it->is_null()) {
    auto v = NumberValue(*it, "field 'iteration_time_s'");
    if (!v) return v.error();
    if (*v <= 0) return Error{"field 'iteration_time_s': must be positive"};
    sel.kind = Kind::kIterationTime;
    sel.value = *v;
    ++given;
  }
  if (given != 1) return Error{"give exactly one of 'point', 'index' or 'iteration_time_s'"};
  return sel;
}

json PlanSelection::ToJson() const {
  switch (kind) {
    case Kind::kFastest:
      return {{"point", "fastest"}};
    case Kind::kMinEnergy:
      return {{"point", "min_energy"}};
    case Kind::kIndex:
      return {{"index", static_cast<int64_t>(value)}};
    case Kind::kIterationTime:
      return {{"iteration_time_s", value}};
  }
  return {{"point", "fastest"}};
}

Result<PowerTarget> PowerTargetFromJson(const json& j) { return PowerTarget::FromJson(j); }

Result<PowerTarget> PowerTarget::FromJson(const json& j) {
  if (auto s = RequireObject(j, "power target"); !s) return s.error();
  // expires_at_unix_s: only in a stored job state (ToJson); from a client it is replaced.
  if (auto s = RefuseUnknownFields(
          j, {"peak_power_per_gpu_w", "avg_power_per_gpu_w", "reason", "lease_s", "expires_at_unix_s"});
      !s) {
    return s.error();
  }
  PowerTarget target;
  int given = 0;
  for (const auto& [name, kind] :
       {std::pair{"peak_power_per_gpu_w", Kind::kPeak1s}, std::pair{"avg_power_per_gpu_w", Kind::kAverage}}) {
    auto it = j.find(name);
    if (it == j.end() || it->is_null()) continue;
    auto v = NumberValue(*it, std::string("field '") + name + "'");
    if (!v) return v.error();
    if (*v <= 0) return Error{std::string("field '") + name + "': expected watts > 0, got " + GeneralText(*v)};
    target.kind = kind;
    target.per_gpu_w = *v;
    ++given;
  }
  if (given != 1) {
    return Error{
        "give exactly one of 'peak_power_per_gpu_w' (the 1-s peak power per GPU, W) or "
        "'avg_power_per_gpu_w' (the average power per GPU, W)"};
  }
  if (auto it = j.find("reason"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return Error{"field 'reason': expected a string, got " + TypeName(*it)};
    const std::string& reason = it->get_ref<const std::string&>();
    if (reason.size() > kPowerTargetReasonMaxBytes) {
      return Error{"field 'reason': at most " + std::to_string(kPowerTargetReasonMaxBytes) + " bytes, got " +
                   std::to_string(reason.size())};
    }
    target.reason = PrintableText(reason, kPowerTargetReasonMaxBytes);
  }
  if (auto it = j.find("lease_s"); it != j.end() && !it->is_null()) {
    auto v = NumberValue(*it, "field 'lease_s'");
    if (!v) return v.error();
    if (!(*v >= 1 && *v <= kPowerTargetMaxLeaseS)) {
      return Error{"field 'lease_s': expected seconds in [1, " + GeneralText(kPowerTargetMaxLeaseS) + "], got " +
                   GeneralText(*v)};
    }
    target.lease_s = *v;
  }
  // Only in a stored job state: the server sets it from lease_s.
  if (auto it = j.find("expires_at_unix_s"); it != j.end() && !it->is_null()) {
    auto v = NumberValue(*it, "field 'expires_at_unix_s'");
    if (!v) return v.error();
    target.expires_at_unix_s = *v;
  }
  return target;
}

json PowerTarget::ToJson() const {
  json j = {{kind == Kind::kPeak1s ? "peak_power_per_gpu_w" : "avg_power_per_gpu_w", per_gpu_w}};
  if (!reason.empty()) j["reason"] = reason;
  if (lease_s > 0) {
    j["lease_s"] = lease_s;
    j["expires_at_unix_s"] = expires_at_unix_s;
  }
  return j;
}

Result<DeadlineScheduleSpec> DeadlineScheduleSpec::FromJson(const json& j) {
  if (auto s = RequireObject(j, "deadline schedule"); !s) return s.error();
  if (auto s = RefuseUnknownFields(
          j, {"iterations", "deadline", "start", "objective", "price_csv", "carbon_csv", "power_budget_csv",
              "budget_power", "pipelines", "replan_margin", "from_step", "replans"});
      !s) {
    return s.error();
  }
  DeadlineScheduleSpec spec;
  auto iterations = NumberField(j, "iterations");
  if (!iterations) return iterations.error();
  if (!(*iterations >= 1 && *iterations <= 1e12)) {
    return Error{"field 'iterations': expected 1 to 1e12 iterations, got " + GeneralText(*iterations)};
  }
  spec.iterations = *iterations;
  auto text = [&](const char* name, std::string& out, size_t max_bytes) -> Status {
    auto it = j.find(name);
    if (it == j.end() || it->is_null()) return Status::Ok();
    if (!it->is_string()) return Error{std::string("field '") + name + "': expected a string, got " + TypeName(*it)};
    if (it->get_ref<const std::string&>().size() > max_bytes) {
      return Error{std::string("field '") + name + "': at most " + std::to_string(max_bytes) + " bytes"};
    }
    out = it->get<std::string>();
    return Status::Ok();
  };
  for (const auto& [name, out, max] :
       {std::tuple{"deadline", &spec.deadline, size_t{64}}, std::tuple{"start", &spec.start, size_t{64}},
        std::tuple{"objective", &spec.objective, size_t{16}},
        std::tuple{"budget_power", &spec.budget_power, size_t{16}},
        std::tuple{"price_csv", &spec.price_csv, kDeadlineSeriesMaxBytes},
        std::tuple{"carbon_csv", &spec.carbon_csv, kDeadlineSeriesMaxBytes},
        std::tuple{"power_budget_csv", &spec.power_budget_csv, kDeadlineSeriesMaxBytes}}) {
    if (auto s = text(name, *out, max); !s) return s.error();
  }
  if (spec.deadline.empty()) return Error{"field 'deadline' is required (an ISO 8601 time)"};
  if (!spec.objective.empty() && spec.objective != "cost" && spec.objective != "carbon" && spec.objective != "energy") {
    return Error{"field 'objective': expected \"cost\", \"carbon\" or \"energy\", got \"" +
                 PrintableText(spec.objective) + "\""};
  }
  if (!spec.budget_power.empty() && spec.budget_power != "peak" && spec.budget_power != "average") {
    return Error{"field 'budget_power': expected \"peak\" or \"average\", got \"" + PrintableText(spec.budget_power) +
                 "\""};
  }
  auto pipelines = IntField(j, "pipelines", 0, 100000, 0);
  if (!pipelines) return pipelines.error();
  spec.pipelines = *pipelines;
  auto margin = NumberField(j, "replan_margin", 0.02);
  if (!margin) return margin.error();
  if (!(*margin > 0 && *margin <= 1)) {
    return Error{"field 'replan_margin': expected a share of the iterations in (0, 1], got " + GeneralText(*margin)};
  }
  spec.replan_margin = *margin;
  auto from_step = NumberField(j, "from_step", 0.0);
  if (!from_step) return from_step.error();
  if (!(*from_step >= 0 && *from_step <= 9e15)) return Error{"field 'from_step': expected a training step >= 0"};
  spec.from_step = static_cast<int64_t>(*from_step);
  auto replans = IntField(j, "replans", 0, 1000000000, 0);
  if (!replans) return replans.error();
  spec.replans = *replans;
  return spec;
}

json DeadlineScheduleSpec::ToJson() const {
  json j = {{"iterations", iterations},
            {"deadline", deadline},
            {"replan_margin", replan_margin},
            {"from_step", from_step},
            {"replans", replans}};
  if (!start.empty()) j["start"] = start;
  if (!objective.empty()) j["objective"] = objective;
  if (!price_csv.empty()) j["price_csv"] = price_csv;
  if (!carbon_csv.empty()) j["carbon_csv"] = carbon_csv;
  if (!power_budget_csv.empty()) j["power_budget_csv"] = power_budget_csv;
  if (!budget_power.empty()) j["budget_power"] = budget_power;
  if (pipelines > 0) j["pipelines"] = pipelines;
  return j;
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

// num_microbatches 0 is "not set yet" (a job registered without it): null, which
// PlannerSettingsFromJson reads back as exactly that, so what is stored loads again.
json ToJson(const PlannerSettings& s) {
  return {{"num_microbatches", s.num_microbatches > 0 ? json(s.num_microbatches) : json(nullptr)},
          {"schedule", std::string(PipelineScheduleName(s.schedule))},
          {"virtual_stages", s.virtual_stages},
          {"unit_time_s", s.unit_time_s},
          {"noise_factor", s.noise_factor},
          {"cost_model", std::string(CostModelName(s.cost_model))},
          {"p2p_power_w", s.p2p_power_w},
          {"profiling_min_freq_mhz", s.profiling_min_freq_mhz}};
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
