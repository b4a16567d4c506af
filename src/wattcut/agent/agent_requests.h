// The node agent's request parsers (docs/agent.md): pure functions from a request's text (body,
// query parameters, path segments) to typed values. No I/O: the routes, the unit tests and the
// libFuzzer target (fuzz/agent_requests_fuzz.cc) call them.
//
// Errors are values with codes, and their messages name the field and what was expected:
//   * ErrorCode::kMalformed (400): a body that is not JSON, or not a JSON object;
//   * ErrorCode::kInvalidArgument (422): a field missing, of the wrong type, out of range, or
//     unknown (a misspelt "min_mhz" must not pass silently), a bad query parameter;
//   * ErrorCode::kNotFound (404): a path segment that cannot name a GPU or a lease.
// A field given as null is the same as a field left out.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::agent {

inline constexpr int kMaxGpuIndex = 4095;
inline constexpr int kMaxClockMhz = 100000;
inline constexpr double kMaxPowerLimitW = 100000;

// POST /v1/leases {"gpus":[0,1],"ttl_s":10}
struct LeaseRequest {
  std::vector<int> gpus;  // non-empty, no GPU twice, each 0..kMaxGpuIndex
  int ttl_s = 10;         // 1..3600
};

// PUT /v1/jobs/{id} {"uid":1000,"gpus":[0,1]} (root on the socket: the Slurm plugin)
struct JobRequest {
  int uid = -1;  // 0..2^31-1, the job's owner
  // Left out: every GPU of the node for a new job, unchanged for a registered one; empty: none.
  std::optional<std::vector<int>> gpus;
};

// PUT /v1/gpus/{i}/sm-clocks and memory-clocks {"min_mhz":1200,"max_mhz":1200}
struct ClockRangeRequest {
  int min_mhz = 0;  // 1..kMaxClockMhz
  int max_mhz = 0;  // min_mhz..kMaxClockMhz; left out: min_mhz
};

// PUT /v1/gpus/{i}/power-limit {"watts":300}
struct PowerLimitRequest {
  double watts = 0;  // finite, in (0, kMaxPowerLimitW)
};

// PUT /v1/gpus/{i}/ceiling {"mhz":1275,"lease_s":30,"reason":"low-priority"} and PUT /v1/ceilings,
// which also takes "gpus".
struct CeilingRequest {
  int mhz = 0;                           // 1..kMaxClockMhz
  int lease_s = 0;                       // 1..86400
  std::string reason;                    // at most 64 printable ASCII characters; left out: ""
  std::optional<std::vector<int>> gpus;  // PUT /v1/ceilings only; left out: every GPU
};

// Which ceiling request a body is: one GPU's (the GPU is in the path) or the node's (may name GPUs).
enum class CeilingScope { kOneGpu, kAllGpus };

// GET /v1/readings/stream?interval_s=0.1&count=50
struct StreamQuery {
  double interval_s = 1;         // 0.01..60
  std::optional<int64_t> count;  // 1..1,000,000; left out: until the client leaves
};

Result<LeaseRequest> ParseLeaseRequest(std::string_view body);
Result<ClockRangeRequest> ParseClockRangeRequest(std::string_view body);
Result<JobRequest> ParseJobRequest(std::string_view body);
Result<PowerLimitRequest> ParsePowerLimitRequest(std::string_view body);
Result<CeilingRequest> ParseCeilingRequest(std::string_view body, CeilingScope scope);
// The query parameters as the HTTP layer splits them (httplib's Params: a name may repeat,
// which is refused). Unknown parameters are refused.
Result<StreamQuery> ParseStreamQuery(const std::multimap<std::string, std::string>& params);

// A GPU index as a path segment: "0".."4095", ASCII digits only (no sign, no blanks).
Result<int> ParseGpuIndexSegment(std::string_view segment);
// A batch job's id (PUT /v1/jobs/{id}): 1 to 64 of [A-Za-z0-9._-]; kInvalidArgument naming `what`
// and the rule otherwise.
Status CheckJobId(std::string_view id, std::string_view what);
// A lease id as a path segment: "1".."9223372036854775808" (2^63), ASCII digits only.
Result<uint64_t> ParseLeaseIdSegment(std::string_view segment);

}  // namespace wattcut::agent
