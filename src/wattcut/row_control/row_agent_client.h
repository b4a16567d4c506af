// Each server's node agent as the row controller uses it (docs/agent.md), over TCP with the row's
// token (an agent token of scope `row`), and all of a row's agents at once.
//
// Timeouts come from the controller's telemetry period (AgentTimeouts::ForPeriod): a slow or dead
// agent must not hold up a period, so a request gets at most half a period (clamped to 50 ms..5 s)
// and its connection a quarter (clamped to 50 ms..2 s). At the default 1 s period: 250 ms to
// connect, 500 ms for the whole request; an agent on the row's network answers in about a
// millisecond, so only an agent that is down, overloaded or cut off misses it, and its reading is
// stale for that period.
//
// Every error names the server and its agent URL ("server gpu-a01 (http://10.1.0.11:7788): GET
// /v1/readings: ..."); the agent's own {"error","code"} is kept as the message and code; an agent
// that cannot be reached or did not answer in time is ErrorCode::kUnavailable.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/http/concurrent_requests.h"
#include "wattcut/http/http_client.h"
#include "wattcut/row_control/row_file.h"

namespace wattcut::row_control {

struct AgentTimeouts {
  double connect_timeout_s = 0.25;
  double request_timeout_s = 0.5;  // the whole request, connection included

  // The timeouts for a controller that reads every `telemetry_period_s` (see above).
  static AgentTimeouts ForPeriod(double telemetry_period_s);
};

// One reading of a server's power (GET /v1/readings/server).
struct ServerPowerSample {
  double power_w = 0;  // server.power_w: GPUs plus the rest of the server
  std::string source;  // server.source: "model" or "redfish"
  // gpu_power: "instant" (NVML's instant field of every GPU) or "power_usage" (NVML's power usage: a
  // 1 s average on recent GPUs; also what an agent older than the field says nothing of).
  std::string gpu_power = "power_usage";
  int gpu_count = 0;        // GPUs in the reading
  double agent_time_s = 0;  // time_s: the agent's Unix time of the reading
};

// One GPU's ceiling as the agent holds it (GET /v1/state).
struct GpuCeiling {
  int gpu = 0;
  int mhz = 0;
  std::string reason;       // what the controller sent: "low-priority", "brake", ...
  double expires_in_s = 0;  // until its lease runs out
  bool operator==(const GpuCeiling&) const = default;
};

// A server's ceilings: what a restarted controller resumes from.
struct AgentCeilings {
  int gpu_count = 0;
  std::vector<GpuCeiling> ceilings;  // the GPUs that have one, by GPU index
};

// What the agent says of itself at start (GET /v1/agent).
struct AgentIdentity {
  std::string hostname;
  std::string version;
  int gpu_count = 0;
};

class RowAgentClient {
 public:
  // Does not connect yet. `token`: the row token, sent as a bearer token on every request.
  static Result<std::unique_ptr<RowAgentClient>> Create(const RowServer& server, const std::string& token,
                                                        const AgentTimeouts& timeouts);

  // At start: the agent answers (else kUnavailable), takes the token (a 401 is kPermissionDenied,
  // "the agent refused the row's token") and the token has the `row` scope (a 403 likewise, "the
  // token lacks the 'row' scope"). The scope is probed with a PUT /v1/ceilings the agent must
  // refuse whatever the scope allows (mhz 0 is out of range), so a check never changes a clock.
  Result<AgentIdentity> Check();

  // GET /v1/readings/server: the server's power. A malformed answer is an error naming the field.
  Result<ServerPowerSample> ReadPower();
  // PUT /v1/ceilings {"mhz","lease_s","reason"} on every GPU of the server.
  Status SetCeilings(int mhz, int lease_s, const std::string& reason);
  // DELETE /v1/ceilings: every GPU's ceiling lifted.
  Status ClearCeilings();
  // GET /v1/state: each GPU's ceiling.
  Result<AgentCeilings> ReadCeilings();

  const RowServer& server() const { return server_; }

 private:
  friend class RowAgents;
  RowAgentClient(RowServer server, std::unique_ptr<http::HttpClient> client);

  // What each request's answer means, the same whether it was asked alone (the calls above) or
  // with the row's other servers (RowAgents). `answer` is the transport's result.
  Result<http::HttpResponse> Accepted(Result<http::HttpResponse> answer, std::string_view method,
                                      std::string_view path) const;
  Result<AgentIdentity> IdentityOf(Result<http::HttpResponse> agent, Result<http::HttpResponse> probe) const;
  Result<ServerPowerSample> PowerOf(Result<http::HttpResponse> readings) const;
  Status CommandDone(Result<http::HttpResponse> answer, std::string_view method, std::string_view path) const;
  Result<AgentCeilings> CeilingsOf(Result<http::HttpResponse> state) const;
  std::string Where(std::string_view method, std::string_view path) const;

  RowServer server_;
  std::unique_ptr<http::HttpClient> client_;
};

// A command for one server: its ceilings set on every GPU, or lifted.
struct AgentCommand {
  enum class Kind { kSetCeilings, kClearCeilings };
  size_t server = 0;  // index in the row
  Kind kind = Kind::kSetCeilings;
  int mhz = 0;         // kSetCeilings
  int lease_s = 0;     // kSetCeilings
  std::string reason;  // kSetCeilings
};

// Every server of a row, asked at once from the calling thread (http/concurrent_requests.h: one
// poll over every agent's connection, never a thread per server or per period; the connections are
// kept from one period to the next). A call returns by its deadline: a server whose answer has not
// come by then is an error for this call (kDeadlineExceeded: a stale reading), its request is
// abandoned and its connection closed (the next call connects again), so nothing of a call is left
// running after it returns. Calls from several threads take turns.
class RowAgents {
 public:
  using Clock = std::chrono::steady_clock;

  static Result<std::unique_ptr<RowAgents>> Create(const std::vector<RowServer>& servers, const std::string& token,
                                                   const AgentTimeouts& timeouts);

  size_t size() const { return clients_.size(); }
  const RowServer& server(size_t i) const { return clients_[i]->server(); }
  RowAgentClient& client(size_t i) { return *clients_[i]; }

  // Check() on every agent; the error lists every server that failed (each with its reason).
  Result<std::vector<AgentIdentity>> CheckAll(Clock::time_point deadline);
  // One reading per server, in row order: its sample, or why there is none this time.
  std::vector<Result<ServerPowerSample>> ReadAll(Clock::time_point deadline);
  // Whether ReadAll asks for the GPUs' instant power (GET /v1/readings/server?gpu_power=instant):
  // an in-band controller reading every few milliseconds must not read a 1-second average.
  void ReadInstantGpuPower(bool instant) { instant_gpu_power_ = instant; }
  // Every server's ceilings, in row order.
  std::vector<Result<AgentCeilings>> ReadAllCeilings(Clock::time_point deadline);
  // One Status per command, in the order given. A server's commands run in the order given, one
  // after the other; different servers' concurrently. A command naming no server of the row is
  // refused (kInvalidArgument) without being sent.
  std::vector<Status> SendAll(const std::vector<AgentCommand>& commands, Clock::time_point deadline);

 private:
  RowAgents() = default;
  // The same request to every server, in row order.
  std::vector<Result<http::HttpResponse>> AskEvery(const std::string& method, const std::string& path,
                                                   const std::string& body, Clock::time_point deadline);

  std::vector<std::unique_ptr<RowAgentClient>> clients_;
  std::unique_ptr<http::ConcurrentRequests> requests_;  // one keep-alive connection per server
  bool instant_gpu_power_ = false;
};

}  // namespace wattcut::row_control
