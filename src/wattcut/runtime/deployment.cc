#include "wattcut/runtime/deployment.h"

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "wattcut/base/json_field.h"
#include "wattcut/base/json_object.h"

namespace wattcut {
namespace {

using nlohmann::json;

// The rank's reader of the server's answer (base/json_field.h): "got a string", a number as
// written, "expected an integer >= 0, missing", kMalformed; every message after "deployment: ".
constexpr JsonFieldReader kDeploymentFields{JsonFieldWording{
    JsonFieldWording::Got::kTypeWithArticle, JsonFieldWording::Missing::kExpectedMissing, ErrorCode::kMalformed}};
// A frequency entry is shown as it was written.
constexpr JsonFieldReader kEntryFields{JsonFieldWording{
    JsonFieldWording::Got::kValue, JsonFieldWording::Missing::kExpectedMissing, ErrorCode::kMalformed}};

Error InDeployment(const Error& error) { return error.WithContext("deployment: "); }

Error FieldError(const char* field, const std::string& expected, const json& doc) {
  return InDeployment(kDeploymentFields.Expected(FieldOf(doc, field), expected));
}

Result<uint64_t> NonNegativeInteger(const json& doc, const char* field) {
  auto value = kDeploymentFields.NonNegativeInteger(FieldOf(doc, field));
  if (!value) return InDeployment(value.error());
  return value;
}

Result<std::vector<ScheduleEntry>> Frequencies(const json& list) {
  std::vector<ScheduleEntry> out;
  out.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const json& item = list[i];
    const std::string field = "frequencies[" + std::to_string(i) + "]";
    if (!item.is_array() || item.size() != 2 || !item[0].is_string() || item[0].get<std::string>().empty() ||
        !item[1].is_number_integer()) {
      return InDeployment(kEntryFields.Expected({&item, field}, "[\"instruction\", MHz]"));
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
  if (Status object = kDeploymentFields.RequireObject(doc, "deployment"); !object) return object.error();

  DeploymentAnswer answer;
  auto version = NonNegativeInteger(doc, "version");
  if (!version) return version.error();
  answer.version = *version;
  const char* const seconds = "a number of seconds in (0, 3600]";
  auto interval = kDeploymentFields.Number(FieldOf(doc, "poll_interval_s"), seconds);
  if (!interval || !(*interval > 0) || *interval > kMaxDeploymentPollIntervalS) {
    return FieldError("poll_interval_s", seconds, doc);
  }
  answer.poll_interval_s = *interval;

  if (!doc.contains("apply_from_step")) {
    if (answer.version != sent_version) {
      return FieldError("apply_from_step",
                        "an integer >= 0 (version " + std::to_string(answer.version) + " is not the rank's " +
                            std::to_string(sent_version) + ")",
                        doc);
    }
    return answer;  // unchanged
  }

  RankDeployment change;
  change.version = answer.version;
  auto apply = NonNegativeInteger(doc, "apply_from_step");
  if (!apply) return apply.error();
  change.apply_from_step = *apply;

  const char* const modes = "\"plan\" or \"all_max\"";
  auto mode = kDeploymentFields.String(FieldOf(doc, "mode"), modes);
  if (!mode || (*mode != "plan" && *mode != "all_max")) return FieldError("mode", modes, doc);
  change.mode = *mode == "plan" ? DeploymentMode::kPlan : DeploymentMode::kAllMax;
  if (change.mode == DeploymentMode::kPlan) {
    auto index = NonNegativeInteger(doc, "plan_index");
    if (!index) return index.error();
    if (*index > static_cast<uint64_t>(INT32_MAX)) return FieldError("plan_index", "an integer < 2^31", doc);
    change.plan_index = static_cast<int>(*index);
  }

  if (doc.contains("frequencies") || change.mode == DeploymentMode::kPlan) {
    auto list = kDeploymentFields.Array(FieldOf(doc, "frequencies"), "an array of [\"instruction\", MHz]");
    if (!list) return InDeployment(list.error());
    auto frequencies = Frequencies(**list);
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
