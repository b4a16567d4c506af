// libFuzzer entry point for the node agent's request parsers (wattcut/agent/agent_requests.h)
// and its token file (agent_tokens.h): the first byte picks what the rest is (a request body, the
// stream's query string, a path segment, a token file). Every input must come back as a value or
// an error, never a crash, a hang or an exception, and what a parser accepts must hold its ranges.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "fuzz/message_check.h"
#include "wattcut/agent/agent_requests.h"
#include "wattcut/agent/agent_tokens.h"
#include "wattcut/base/index_ranges.h"
#include "wattcut/http/error_body.h"

namespace {

namespace agent = wattcut::agent;
using wattcut::ErrorCode;
using wattcut::Result;

void CheckError(const wattcut::Error& error) {
  // Error messages go back to clients inside JSON (they must always serialise) and end up in
  // logs and terminals (no raw control bytes).
  wattcut::fuzz::CheckMessage(error.message);
  if (wattcut::http::ErrorBody(error.message).empty()) __builtin_trap();
  if (error.code != ErrorCode::kMalformed && error.code != ErrorCode::kInvalidArgument &&
      error.code != ErrorCode::kNotFound) {
    __builtin_trap();
  }
}

template <typename T>
bool Check(const Result<T>& result) {
  if (!result.ok()) CheckError(result.error());
  return result.ok();
}

bool Check(const wattcut::Status& status) {
  if (!status.ok()) CheckError(status.error());
  return status.ok();
}

void Require(bool condition) {
  if (!condition) __builtin_trap();
}

void CheckGpus(const std::vector<int>& gpus) {
  Require(!gpus.empty());
  std::set<int> seen(gpus.begin(), gpus.end());
  Require(seen.size() == gpus.size());
  for (int gpu : gpus) Require(gpu >= 0 && gpu <= agent::kMaxGpuIndex);
}

void Lease(std::string_view body) {
  auto r = agent::ParseLeaseRequest(body);
  if (!Check(r)) return;
  CheckGpus(r->gpus);
  Require(r->ttl_s >= 1 && r->ttl_s <= 3600);
}

void ClockRange(std::string_view body) {
  auto r = agent::ParseClockRangeRequest(body);
  if (!Check(r)) return;
  Require(r->min_mhz >= 1 && r->min_mhz <= r->max_mhz && r->max_mhz <= agent::kMaxClockMhz);
}

void PowerLimit(std::string_view body) {
  auto r = agent::ParsePowerLimitRequest(body);
  if (!Check(r)) return;
  Require(std::isfinite(r->watts) && r->watts > 0 && r->watts < agent::kMaxPowerLimitW);
}

void Ceiling(std::string_view body, agent::CeilingScope scope) {
  auto r = agent::ParseCeilingRequest(body, scope);
  if (!Check(r)) return;
  Require(r->mhz >= 1 && r->mhz <= agent::kMaxClockMhz && r->lease_s >= 1 && r->lease_s <= 86400);
  Require(r->reason.size() <= 64);
  for (unsigned char c : r->reason) Require(c >= 0x20 && c <= 0x7e);
  if (r->gpus) CheckGpus(*r->gpus);
  if (scope == agent::CeilingScope::kOneGpu) Require(!r->gpus.has_value());
}

// "a=1&b=2" as the HTTP layer splits it (no percent-decoding: httplib hands over any bytes).
void Stream(std::string_view text) {
  std::multimap<std::string, std::string> params;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('&', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view pair = text.substr(pos, end - pos);
    size_t eq = pair.find('=');
    params.emplace(std::string(pair.substr(0, eq)),
                   eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1)));
    pos = end + 1;
  }
  auto r = agent::ParseStreamQuery(params);
  if (!Check(r)) return;
  Require(r->interval_s >= 0.01 && r->interval_s <= 60);
  if (r->count) Require(*r->count >= 1 && *r->count <= 1000000);
}

void Segments(std::string_view text) {
  auto gpu = agent::ParseGpuIndexSegment(text);
  if (Check(gpu)) Require(*gpu >= 0 && *gpu <= agent::kMaxGpuIndex && std::to_string(*gpu) == text);
  auto lease = agent::ParseLeaseIdSegment(text);
  if (Check(lease)) Require(*lease >= 1 && std::to_string(*lease) == text);
}

void Job(std::string_view body) {
  auto r = agent::ParseJobRequest(body);
  if (!Check(r)) return;
  Require(r->uid >= 0);
  if (r->gpus && !r->gpus->empty()) CheckGpus(*r->gpus);
}

// A job id and a Slurm GPU list, as the path and $SLURM_JOB_GPUS give them.
void JobIdAndGpuList(std::string_view text) {
  if (Check(agent::CheckJobId(text, "job"))) {
    Require(!text.empty() && text.size() <= 64 && text.find('/') == std::string_view::npos);
  }
  auto gpus = wattcut::ParseIndexRanges(text, 4095, "$SLURM_JOB_GPUS");
  if (Check(gpus)) {
    for (int gpu : *gpus) Require(gpu >= 0 && gpu <= 4095);
    if (!gpus->empty()) Require(text.find_first_not_of("0123456789,-") == std::string_view::npos);
  }
}

void Tokens(std::string_view text) {
  auto tokens = agent::AgentTokens::Parse(text, "fuzz.tokens");
  if (!Check(tokens)) return;
  Require(tokens->size() > 0);
  // Whatever was accepted, a token of the file is found; text that is not one is not.
  Require(!tokens->Find("").has_value());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  uint8_t kind = data[0];
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (kind % 10) {
    case 0:
      Lease(rest);
      break;
    case 1:
      ClockRange(rest);
      break;
    case 2:
      PowerLimit(rest);
      break;
    case 3:
      Ceiling(rest, agent::CeilingScope::kOneGpu);
      break;
    case 4:
      Ceiling(rest, agent::CeilingScope::kAllGpus);
      break;
    case 5:
      Stream(rest);
      break;
    case 6:
      Segments(rest);
      break;
    case 7:
      Tokens(rest);
      break;
    case 9:
      Job(rest);
      JobIdAndGpuList(rest);
      break;
    default:
      // Every body parser on the same document.
      Lease(rest);
      ClockRange(rest);
      PowerLimit(rest);
      Ceiling(rest, agent::CeilingScope::kOneGpu);
      Ceiling(rest, agent::CeilingScope::kAllGpus);
      Job(rest);
      break;
  }
  return 0;
}
