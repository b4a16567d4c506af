#include "wattcut/server/job_settings.h"

#include <cmath>
#include <limits>

#include "wattcut/base/general_text.h"
#include "wattcut/base/iso_time.h"
#include "wattcut/base/json_object.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/plan/planning_limits.h"
#include "wattcut/profile/cost_model.h"
#include "wattcut/server/json_fields.h"

namespace wattcut::server {

using nlohmann::json;

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

Result<PlannerSettings> PlannerSettingsFromJson(const json& j) { return PlannerSettingsFromJson(j, PlannerSettings{}); }

Result<PlannerSettings> PlannerSettingsFromJson(const json& j, const PlannerSettings& base) {
  if (auto s = RequireObject(j, "planner settings"); !s) return s.error();
  PlannerSettings settings = base;
  auto m = IntField(j, "num_microbatches", 1, kMaxMicrobatches, base.num_microbatches);
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
  auto chunks = IntField(j, "virtual_stages", 1, kMaxStages, base.virtual_stages);
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
  auto unit = NumberField(j, "unit_time_s", base.unit_time_s);
  if (!unit) return unit.error();
  if (*unit <= 0 || *unit > 10) return Error{"field 'unit_time_s': must be in (0, 10]"};
  settings.unit_time_s = *unit;
  auto nf = NumberField(j, "noise_factor", base.noise_factor);
  if (!nf) return nf.error();
  if (*nf <= 0 || *nf > 1) return Error{"field 'noise_factor': must be in (0, 1]"};
  settings.noise_factor = *nf;
  auto p2p = NumberField(j, "p2p_power_w", base.p2p_power_w);
  if (!p2p) return p2p.error();
  if (*p2p < 0 || *p2p > 100000) return Error{"field 'p2p_power_w': must be in [0, 100000]"};
  settings.p2p_power_w = *p2p;
  auto min_freq = IntField(j, "profiling_min_freq_mhz", 0, 100000, base.profiling_min_freq_mhz);
  if (!min_freq) return min_freq.error();
  settings.profiling_min_freq_mhz = *min_freq;
  return settings;
}

Result<PlannerPatch> PlannerPatchFromJson(const json& j) {
  if (auto s = RequireObject(j, "planner settings"); !s) return s.error();
  // Checked now, against the defaults, so that a field of the wrong type or range is refused
  // before the job is looked up; applied to the job's settings under its lock.
  if (auto checked = PlannerSettingsFromJson(j); !checked) return checked.error();
  return PlannerPatch{j};
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
    auto v = NumberValue(*it, "iteration_time_s");
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
    auto v = NumberValue(*it, name);
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
    if (!it->is_string()) return kRequestFields.Expected({&*it, "reason"}, "a string");
    const std::string& reason = it->get_ref<const std::string&>();
    if (reason.size() > kPowerTargetReasonMaxBytes) {
      return Error{"field 'reason': at most " + std::to_string(kPowerTargetReasonMaxBytes) + " bytes, got " +
                   std::to_string(reason.size())};
    }
    target.reason = PrintableText(reason, kPowerTargetReasonMaxBytes);
  }
  if (auto it = j.find("lease_s"); it != j.end() && !it->is_null()) {
    auto v = NumberValue(*it, "lease_s");
    if (!v) return v.error();
    if (!(*v >= 1 && *v <= kPowerTargetMaxLeaseS)) {
      return Error{"field 'lease_s': expected seconds in [1, " + GeneralText(kPowerTargetMaxLeaseS) + "], got " +
                   GeneralText(*v)};
    }
    target.lease_s = *v;
  }
  // Only in a stored job state: the server sets it from lease_s.
  if (auto it = j.find("expires_at_unix_s"); it != j.end() && !it->is_null()) {
    auto v = NumberValue(*it, "expires_at_unix_s");
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
    if (!it->is_string()) return kRequestFields.Expected({&*it, name}, "a string");
    if (it->get_ref<const std::string&>().size() > max_bytes) {
      return Error{std::string("field '") + name + "': at most " + std::to_string(max_bytes) + " bytes"};
    }
    out = it->get<std::string>();
    if (out.empty()) {
      return Error{std::string("field '") + name + "': expected text, got an empty string (leave the field out " +
                   "when there is none)"};
    }
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

Result<DeadlineScheduleSpec> DeadlineScheduleSpec::FromRequestJson(const json& j) {
  if (j.is_object()) {
    for (const char* set_by_server : {"from_step", "replans"}) {
      if (j.contains(set_by_server)) {
        return Error{std::string("field '") + set_by_server +
                     "': set by the server (the job's step when the schedule is set, and its replans); leave it out"};
      }
    }
    if (auto p = j.find("pipelines"); p != j.end() && p->is_number() && p->get<double>() == 0) {
      return Error{"field 'pipelines': expected 1 to 100000 pipelines, got 0 (leave it out for the job's dp_degree)"};
    }
  }
  Result<DeadlineScheduleSpec> spec = FromJson(j);
  if (!spec.ok()) return spec;
  // A time a person sends says its zone (a stored spec is read as it was stored).
  for (const auto& [name, text] : {std::pair{"deadline", &spec->deadline}, std::pair{"start", &spec->start}}) {
    if (text->empty()) continue;
    if (Result<double> t = ParseIsoTimeWithZone(*text); !t.ok()) {
      return Error{std::string("field '") + name + "': " + t.error().message};
    }
  }
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

}  // namespace wattcut::server
