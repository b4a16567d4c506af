#include "wattcut/runtime/deployment.h"

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "wattcut/base/json_object.h"
#include "wattcut/base/json_preview.h"

namespace wattcut {
namespace {

using nlohmann::json;

std::string TypeName(const json& value) {
  if (value.is_null()) return "null";
  if (value.is_boolean()) return "a boolean";
  if (value.is_number()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_array()) return "an array";
  return "an object";
}

Error FieldError(const std::string& field, const std::string& expected, const json* value) {
  return Error::Malformed("deployment: field '" + field + "': expected " + expected +
                          (value ? ", got " + (value->is_number() ? value->dump() : TypeName(*value)) : ", missing"));
}

const json* Find(const json& doc, const char* field) {
  auto it = doc.find(field);
  return it == doc.end() ? nullptr : &*it;
}

Result<uint64_t> NonNegativeInteger(const json& doc, const char* field) {
  const json* value = Find(doc, field);
  if (!value || !value->is_number_integer() || (!value->is_number_unsigned() && value->get<int64_t>() < 0)) {
    return FieldError(field, "an integer >= 0", value);
  }
  return value->get<uint64_t>();
}

Result<std::vector<ScheduleEntry>> Frequencies(const json& list) {
  std::vector<ScheduleEntry> out;
  out.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const json& item = list[i];
    const std::string field = "frequencies[" + std::to_string(i) + "]";
    if (!item.is_array() || item.size() != 2 || !item[0].is_string() || item[0].get<std::string>().empty() ||
        !item[1].is_number_integer()) {
      return Error::Malformed("deployment: field '" + field + "': expected [\"instruction\", MHz], got " +
                              JsonPreview(item, 80));
    }
    if (!item[1].is_number_unsigned() || item[1].get<uint64_t>() == 0 || item[1].get<uint64_t>() > 100000) {
      return Error::Malformed("deployment: field '" + field + "': the frequency must be 1..100000 MHz, got " +
                              item[1].dump());
    }
    out.push_back({item[0].get<std::string>(), item[1].get<int>()});
  }
  return out;
}

}  // namespace

Result<DeploymentAnswer> ParseDeploymentAnswer(std::string_view text, uint64_t sent_version) {
  const json doc = ParseJsonOrDiscarded(text);
  if (doc.is_discarded()) return Error::Malformed("deployment: not valid JSON");
  if (!doc.is_object()) return Error::Malformed("deployment: expected a JSON object, got " + TypeName(doc));

  DeploymentAnswer answer;
  auto version = NonNegativeInteger(doc, "version");
  if (!version) return version.error();
  answer.version = *version;
  const json* interval = Find(doc, "poll_interval_s");
  if (!interval || !interval->is_number() || !std::isfinite(interval->get<double>()) ||
      !(interval->get<double>() > 0) || interval->get<double>() > kMaxDeploymentPollIntervalS) {
    return FieldError("poll_interval_s", "a number of seconds in (0, 3600]", interval);
  }
  answer.poll_interval_s = interval->get<double>();

  if (!Find(doc, "apply_from_step")) {
    if (answer.version != sent_version) {
      return FieldError("apply_from_step",
                        "an integer >= 0 (version " + std::to_string(answer.version) + " is not the rank's " +
                            std::to_string(sent_version) + ")",
                        nullptr);
    }
    return answer;  // unchanged
  }

  RankDeployment change;
  change.version = answer.version;
  auto apply = NonNegativeInteger(doc, "apply_from_step");
  if (!apply) return apply.error();
  change.apply_from_step = *apply;

  const json* mode = Find(doc, "mode");
  if (!mode || !mode->is_string() || (*mode != "plan" && *mode != "all_max")) {
    return FieldError("mode", "\"plan\" or \"all_max\"", mode);
  }
  change.mode = *mode == "plan" ? DeploymentMode::kPlan : DeploymentMode::kAllMax;
  if (change.mode == DeploymentMode::kPlan) {
    auto index = NonNegativeInteger(doc, "plan_index");
    if (!index) return index.error();
    if (*index > static_cast<uint64_t>(INT32_MAX))
      return FieldError("plan_index", "an integer < 2^31", Find(doc, "plan_index"));
    change.plan_index = static_cast<int>(*index);
  }

  const json* list = Find(doc, "frequencies");
  if (list || change.mode == DeploymentMode::kPlan) {
    if (!list || !list->is_array()) return FieldError("frequencies", "an array of [\"instruction\", MHz]", list);
    auto frequencies = Frequencies(*list);
    if (!frequencies) return frequencies.error();
    change.frequencies = std::move(*frequencies);
    if (change.frequencies.empty() && change.mode == DeploymentMode::kPlan) {
      return Error::Malformed("deployment: field 'frequencies': a plan needs at least one instruction, got []");
    }
  }
  answer.change = std::move(change);
  return answer;
}

}  // namespace wattcut
