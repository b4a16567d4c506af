#include "wattcut/agent/agent_requests.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "wattcut/base/general_text.h"
#include "wattcut/base/json_field.h"
#include "wattcut/base/json_object.h"
#include "wattcut/base/printable_text.h"

namespace wattcut::agent {

using nlohmann::json;

namespace {

constexpr int kMaxLeaseTtlS = 3600;
constexpr int kMaxCeilingLeaseS = 86400;
constexpr size_t kMaxReasonChars = 64;
constexpr double kMinStreamIntervalS = 0.01;
constexpr double kMaxStreamIntervalS = 60;
constexpr int64_t kMaxStreamCount = 1000000;

// The agent's requests' fields: a scalar shown as written, a field that is null as if left out.
constexpr JsonFieldReader kFields{JsonFieldWording{JsonFieldWording::Got::kScalarValue}};
constexpr JsonFieldReader kBody{
    JsonFieldWording{JsonFieldWording::Got::kScalarValue, JsonFieldWording::Missing::kRequired, ErrorCode::kMalformed}};

// The body as a JSON object; a body that is not JSON, JSON that is not an object, or an object
// that gives a key twice (json_object.h) is kMalformed.
Result<json> ParseObject(std::string_view body) {
  if (body.empty()) return Error::Malformed("request body is empty; expected a JSON object");
  auto value = ParseJsonWithoutDuplicateKeys(body);
  if (!value.ok()) return value.error();
  if (Status s = kBody.RequireObject(*value, "request body"); !s.ok()) return s.error();
  return value;
}

// Field `name` of the body; no value when left out or null.
JsonField Field(const json& object, const char* name) {
  JsonField field = FieldOf(object, name);
  if (field.value != nullptr && field.value->is_null()) field.value = nullptr;
  return field;
}

std::string RangeText(int64_t min, int64_t max) {
  return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

Result<int> IntField(const json& object, const char* name, int min, int max, std::optional<int> fallback) {
  const JsonField field = Field(object, name);
  if (field.value == nullptr) {
    if (fallback) return *fallback;
    return Error{FieldName(name) + " is required (" + RangeText(min, max) + ")"};
  }
  auto v = kFields.IntegerIn(field, min, max, RangeText(min, max));
  if (!v) return v.error();
  return static_cast<int>(*v);
}

// A list of GPU indices: non-empty, each 0..kMaxGpuIndex, none twice.
Result<std::vector<int>> GpuList(const JsonField& field) {
  auto value = kFields.Array(field, "a list of GPU indices");
  if (!value) return value.error();
  if ((*value)->empty()) return Error{FieldName(field.path) + ": expected at least one GPU index, got an empty list"};
  std::vector<int> gpus;
  std::set<int64_t> seen;
  for (size_t i = 0; i < (*value)->size(); ++i) {
    auto gpu = kFields.IntegerIn(ElementOf(**value, i, field.path), 0, kMaxGpuIndex, RangeText(0, kMaxGpuIndex));
    if (!gpu) return gpu.error();
    if (!seen.insert(*gpu).second) {
      return Error{FieldName(field.path) + ": GPU " + std::to_string(*gpu) + " is listed twice"};
    }
    gpus.push_back(static_cast<int>(*gpu));
  }
  return gpus;
}

// Digits only, no leading zero (one spelling per number), at most `max`.
std::optional<uint64_t> CanonicalUnsigned(std::string_view text, uint64_t max) {
  if (text.empty() || text.size() > 20 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value > max) return std::nullopt;
  return value;
}

}  // namespace

Result<LeaseRequest> ParseLeaseRequest(std::string_view body) {
  auto object = ParseObject(body);
  if (!object) return object.error();
  if (auto s = RefuseUnknownFields(*object, {"gpus", "ttl_s"}); !s) return s.error();
  LeaseRequest request;
  const JsonField gpus = Field(*object, "gpus");
  if (gpus.value == nullptr) return Error{"field 'gpus' is required (a list of GPU indices, e.g. [0, 1])"};
  auto list = GpuList(gpus);
  if (!list) return list.error();
  request.gpus = std::move(*list);
  auto ttl = IntField(*object, "ttl_s", 1, kMaxLeaseTtlS, 10);
  if (!ttl) return ttl.error();
  request.ttl_s = *ttl;
  return request;
}

Result<JobRequest> ParseJobRequest(std::string_view body) {
  auto object = ParseObject(body);
  if (!object) return object.error();
  if (auto s = RefuseUnknownFields(*object, {"uid", "gpus"}); !s) return s.error();
  JobRequest request;
  auto uid = IntField(*object, "uid", 0, std::numeric_limits<int>::max(), std::nullopt);
  if (!uid) return uid.error();
  request.uid = *uid;
  if (const JsonField gpus = Field(*object, "gpus"); gpus.value != nullptr) {
    if (gpus.value->is_array() && gpus.value->empty()) {
      request.gpus = std::vector<int>{};
    } else {
      auto list = GpuList(gpus);
      if (!list) return list.error();
      request.gpus = std::move(*list);
    }
  }
  return request;
}

Result<ClockRangeRequest> ParseClockRangeRequest(std::string_view body) {
  auto object = ParseObject(body);
  if (!object) return object.error();
  if (auto s = RefuseUnknownFields(*object, {"min_mhz", "max_mhz"}); !s) return s.error();
  ClockRangeRequest request;
  auto min_mhz = IntField(*object, "min_mhz", 1, kMaxClockMhz, std::nullopt);
  if (!min_mhz) return min_mhz.error();
  auto max_mhz = IntField(*object, "max_mhz", 1, kMaxClockMhz, *min_mhz);
  if (!max_mhz) return max_mhz.error();
  if (*max_mhz < *min_mhz) {
    return Error{"field 'max_mhz': " + std::to_string(*max_mhz) + " is below min_mhz " + std::to_string(*min_mhz) +
                 "; expected min_mhz <= max_mhz"};
  }
  request.min_mhz = *min_mhz;
  request.max_mhz = *max_mhz;
  return request;
}

Result<PowerLimitRequest> ParsePowerLimitRequest(std::string_view body) {
  auto object = ParseObject(body);
  if (!object) return object.error();
  if (auto s = RefuseUnknownFields(*object, {"watts"}); !s) return s.error();
  const JsonField watts = Field(*object, "watts");
  if (watts.value == nullptr) return Error{"field 'watts' is required (the power limit in W, e.g. 300)"};
  if (!watts.value->is_number()) return kFields.Expected(watts, "a number of watts");
  double w = watts.value->get<double>();
  if (!std::isfinite(w) || w <= 0 || w >= kMaxPowerLimitW) {
    return Error{"field 'watts': " + GeneralText(w) + " is out of range; expected more than 0 and less than " +
                 GeneralText(kMaxPowerLimitW)};
  }
  return PowerLimitRequest{w};
}

Result<CeilingRequest> ParseCeilingRequest(std::string_view body, CeilingScope scope) {
  auto object = ParseObject(body);
  if (!object) return object.error();
  Status known = scope == CeilingScope::kAllGpus ? RefuseUnknownFields(*object, {"mhz", "lease_s", "reason", "gpus"})
                                                 : RefuseUnknownFields(*object, {"mhz", "lease_s", "reason"});
  if (!known) return known.error();
  CeilingRequest request;
  auto mhz = IntField(*object, "mhz", 1, kMaxClockMhz, std::nullopt);
  if (!mhz) return mhz.error();
  request.mhz = *mhz;
  auto lease = IntField(*object, "lease_s", 1, kMaxCeilingLeaseS, std::nullopt);
  if (!lease) return lease.error();
  request.lease_s = *lease;
  if (const JsonField reason = Field(*object, "reason"); reason.value != nullptr) {
    const std::string printable = "at most " + std::to_string(kMaxReasonChars) + " printable ASCII characters";
    const std::string expected = "expected " + printable;
    if (!reason.value->is_string()) return kFields.Expected(reason, printable);
    const std::string& text = reason.value->get_ref<const std::string&>();
    for (size_t i = 0; i < text.size(); ++i) {
      auto c = static_cast<unsigned char>(text[i]);
      if (c < 0x20 || c > 0x7e) {
        return Error{"field 'reason': " + expected + "; byte " + std::to_string(i) + " is not one (" +
                     PrintableText(text.substr(i, 1)) + ")"};
      }
    }
    if (text.size() > kMaxReasonChars) {
      return Error{"field 'reason': " + expected + ", got " + std::to_string(text.size())};
    }
    request.reason = text;
  }
  if (scope == CeilingScope::kAllGpus) {
    if (const JsonField gpus = Field(*object, "gpus"); gpus.value != nullptr) {
      auto list = GpuList(gpus);
      if (!list) return list.error();
      request.gpus = std::move(*list);
    }
  }
  return request;
}

Result<StreamQuery> ParseStreamQuery(const std::multimap<std::string, std::string>& params) {
  StreamQuery query;
  for (const auto& [name, value] : params) {
    const std::string what = "query parameter '" + PrintableText(name, 64) + "'";
    if (params.count(name) > 1) return Error{what + " is given " + std::to_string(params.count(name)) + " times"};
    if (name == "interval_s") {
      double v = 0;
      const char* end = value.data() + value.size();
      auto [ptr, ec] = std::from_chars(value.data(), end, v);
      if (value.empty() || ec != std::errc() || ptr != end || !std::isfinite(v) || v < kMinStreamIntervalS ||
          v > kMaxStreamIntervalS) {
        return Error{what + ": expected seconds in [" + GeneralText(kMinStreamIntervalS) + ", " +
                     GeneralText(kMaxStreamIntervalS) + "], got '" + PrintableText(value, 64) + "'"};
      }
      query.interval_s = v;
    } else if (name == "count") {
      auto v = CanonicalUnsigned(value, static_cast<uint64_t>(kMaxStreamCount));
      if (!v || *v < 1) {
        return Error{what + ": expected an integer in [1, " + std::to_string(kMaxStreamCount) + "], got '" +
                     PrintableText(value, 64) + "'"};
      }
      query.count = static_cast<int64_t>(*v);
    } else {
      return Error{"unknown " + what + "; expected only interval_s, count"};
    }
  }
  return query;
}

Result<int> ParseGpuIndexSegment(std::string_view segment) {
  auto v = CanonicalUnsigned(segment, kMaxGpuIndex);
  if (!v) {
    return Error::NotFound("no GPU '" + PrintableText(segment, 64) + "': a GPU index is an integer in [0, " +
                           std::to_string(kMaxGpuIndex) + "]");
  }
  return static_cast<int>(*v);
}

Result<uint64_t> ParseLeaseIdSegment(std::string_view segment) {
  constexpr uint64_t kMaxLeaseId = uint64_t{1} << 63;
  auto v = CanonicalUnsigned(segment, kMaxLeaseId);
  if (!v || *v < 1) {
    return Error::NotFound("no lease '" + PrintableText(segment, 64) +
                           "': a lease id is an integer in [1, 9223372036854775808]");
  }
  return *v;
}

Status CheckJobId(std::string_view id, std::string_view what) {
  const bool ok = !id.empty() && id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
  // "." and ".." name no job: they are a path's own and parent folder wherever an id ends up in one.
  const bool dots_only = std::all_of(id.begin(), id.end(), [](char c) { return c == '.'; });
  if (ok && !dots_only) return Status::Ok();
  return Error::InvalidArgument(std::string(what) + " '" + PrintableText(std::string(id), 80) +
                                "': expected 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-', not only dots "
                                "(a job id)");
}

}  // namespace wattcut::agent
