// The planning server (`wattcut serve`, docs/server.md "Power targets") as the row controller uses
// it: a training job's power target set, read and cleared over HTTP, with the server's token when
// it has one.
//
// Timeouts come from the controller's telemetry period, as the agents' do (AgentTimeouts): a slow
// or dead planning server costs a period at most half of it, and the controller treats it as
// unreachable (the job's servers get ceilings, docs/power-capped-training.md).
//
// Every error names the job and the server ("planning server http://10.0.0.5:7787: job J: PUT
// .../power_target: ..."); the server's own {"error","code"} is kept (a 404 is kNotFound: the
// job is not known there); an unreachable server is kUnavailable; an answer that is not what the
// endpoint gives is kMalformed naming the field.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "wattcut/base/result.h"
#include "wattcut/http/http_client.h"
#include "wattcut/row_control/row_agent_client.h"

namespace wattcut::row_control {

// What the planning server says of a job's power target (its PUT, GET and DELETE answers).
struct JobPowerTarget {
  std::optional<double> target_w;           // per GPU; none: the job has no target
  std::string kind;                         // how the target is decided: "peak_1s" or "average"
  std::string reason;                       // the target's reason, as set
  bool applied = false;                     // the job's frontier is ready and the target is in its deployment
  bool met = false;                         // every pipeline's deployed plan is at or below the target
  bool every_rank_past_apply_step = false;  // every rank runs the deployment
  uint64_t deployment_version = 0;
  std::optional<double> point_power_per_gpu_w;  // the target's plan's power (the lowest when not met)
  std::string note;                             // the server's note, if any

  // The job runs a plan under its target on every rank.
  bool complied() const { return target_w.has_value() && applied && met && every_rank_past_apply_step; }
};

// Parses a power-target answer (kMalformed naming the field).
Result<JobPowerTarget> JobPowerTargetOf(const std::string& body);

class PlanningServerClient {
 public:
  // `base_url`: "http://HOST:PORT" (ParseAgentUrl's form); `token`: may be empty (a server without
  // --token-file takes none).
  static Result<std::unique_ptr<PlanningServerClient>> Create(const std::string& base_url, const std::string& token,
                                                              const AgentTimeouts& timeouts);

  // PUT {"peak_power_per_gpu_w": W, "reason": ..., "lease_s": L}: the target lapses L s after
  // this unless it is set again (L >= 1).
  Result<JobPowerTarget> SetPeakPowerTarget(const std::string& job_id, double per_gpu_w, const std::string& reason,
                                            double lease_s);
  Result<JobPowerTarget> GetPowerTarget(const std::string& job_id);
  Result<JobPowerTarget> ClearPowerTarget(const std::string& job_id);

  const std::string& base_url() const { return base_url_; }

 private:
  PlanningServerClient(std::string base_url, std::unique_ptr<http::HttpClient> client);
  Result<JobPowerTarget> Call(std::string_view method, const std::string& job_id, const std::string& body);

  std::string base_url_;
  std::unique_ptr<http::HttpClient> client_;
};

}  // namespace wattcut::row_control
