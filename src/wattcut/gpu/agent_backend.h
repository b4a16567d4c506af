// The GPUs of a node as its agent (`wattcut agent`, docs/agent.md) shows them: a GpuBackend whose
// every call is a request to the agent over its Unix socket (or TCP with a token), so a process
// without any right to NVML reads and sets clocks through the one process on the node that has it.
//
//  * Discovery is read once, when the backend opens (GET /v1/agent, GET /v1/gpus): the GPUs, their
//    supported clocks and power-limit ranges. Readings are asked for each time (GET /v1/readings).
//  * Setters need the GPU's lease: the first setter call on a GPU leases it (POST /v1/leases), or
//    LeaseGpus leases several up front (a conflict is then found before anything changed). A
//    thread renews every lease every ttl/3, holding no lock a setter needs while it asks: on the
//    Unix socket on a connection of its own, so a setter never waits behind a renewal (over TCP a
//    lease lives on its connection, so the renewal shares it and a setter may wait one round trip). A lease the agent
//    no longer knows (an agent restart: 404 or 403 on renewal, 403 on a setter) is taken again, once per occurrence,
//    and what this backend had set on its GPUs is set again; the setter call that found it is retried.
//  * The destructor releases every lease, and the agent then undoes what this backend set (SM
//    clocks back to any ceiling or reset, memory clocks reset, the default power limit): a lock
//    lasts as long as the backend does, at most.
//  * Errors: an agent's refusal {"error","code"} becomes an Error with that code and the agent's
//    message ("GPU 0 is leased by pid 4242 (uid 1000)"); an agent that cannot be reached is
//    kUnavailable ("cannot reach unix:/run/wattcut/agent.sock: ...").
// SupportedGraphicsClocksMhz answers for the highest memory clock only (what the agent lists).
// Thread-safe: the training thread, the frequency setter's worker and the renewal thread share it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "wattcut/gpu/clock_kind.h"
#include "wattcut/gpu/gpu_backend.h"
#include "wattcut/http/http_client.h"

namespace wattcut {

// Where a node's agent listens by default, and the variable that names another socket.
inline constexpr char kDefaultAgentSocket[] = "/run/wattcut/agent.sock";
inline constexpr char kAgentSocketVariable[] = "WATTCUT_AGENT_SOCKET";
// The agent a process on this node finds by itself: $WATTCUT_AGENT_SOCKET when set, else
// kDefaultAgentSocket when a socket is there; "" when neither (the process opens NVML itself).
std::string AgentFromEnvironment();
// A batch job's credential at the agent (the Slurm plugin sets it in each task of a wattcut job).
inline constexpr char kAgentCredentialVariable[] = "WATTCUT_AGENT_TOKEN";

// The endpoint of an agent named by `agent`: a socket path ("/run/wattcut/agent.sock", or with a
// "unix:" prefix) or a TCP URL ("http://10.0.0.5:7788"). `token_file`, when not empty, holds the
// bearer token: its first line that is neither blank nor a '#' comment, either "TOKEN" or, as in
// the agent's own token file, "SCOPE TOKEN" (http::ReadTokenFile, TokenPlace::kFirstLineWithToken).
// A file that cannot be read or has no token is an error naming the file. Without a token file, a
// socket endpoint carries $WATTCUT_AGENT_TOKEN when it is set (a job's credential is good only on
// the socket: the agent binds it to the job's uid).
Result<http::HttpEndpoint> AgentEndpoint(const std::string& agent, const std::string& token_file = {});

struct AgentBackendOptions {
  http::HttpEndpoint endpoint;
  int lease_ttl_s = 10;                         // 1..3600; renewed every ttl/3
  std::function<void(const std::string&)> log;  // lease events (a lease taken again); default stderr
};

class AgentBackend final : public GpuBackend {
 public:
  // Connects and reads the agent's GPUs. kUnavailable when the agent cannot be reached.
  static Result<std::unique_ptr<AgentBackend>> Open(AgentBackendOptions options);
  // Stops renewing and releases every lease.
  ~AgentBackend() override;

  // "agent(unix:/run/wattcut/agent.sock)"
  std::string name() const override { return "agent(" + client_->description() + ")"; }
  Result<int> DeviceCount() override { return static_cast<int>(gpus_.size()); }
  Result<GpuInfo> Info(int gpu) override;
  Result<std::vector<int>> SupportedMemoryClocksMhz(int gpu) override;
  Result<std::vector<int>> SupportedGraphicsClocksMhz(int gpu, int memory_clock_mhz) override;
  Status LockGpuClocks(int gpu, int min_mhz, int max_mhz) override;
  Status ResetGpuClocks(int gpu) override;
  Status LockMemoryClocks(int gpu, int min_mhz, int max_mhz) override;
  Status ResetMemoryClocks(int gpu) override;
  Result<PowerLimitsMw> PowerLimits(int gpu) override;
  Result<int64_t> PowerLimitMw(int gpu) override;
  Status SetPowerLimitMw(int gpu, int64_t limit_mw) override;
  Result<int64_t> PowerUsageMw(int gpu) override;
  Result<int64_t> TotalEnergyMj(int gpu) override;
  Result<int> SmClockMhz(int gpu) override;

  // Leases the GPUs of `gpus` this backend does not hold yet, in one request (all or none), and
  // holds them until ReleaseLeases or destruction.
  Status LeaseGpus(const std::vector<int>& gpus);
  // Releases every lease (the agent undoes what this backend set on those GPUs); the first error.
  Status ReleaseLeases();
  // The GPUs this backend holds now, ascending.
  std::vector<int> leased_gpus() const;
  // Leases taken again after the agent forgot one (an agent restart).
  uint64_t leases_retaken() const;
  // The agent's backend ("nvml", "simulated", ...), from GET /v1/agent.
  const std::string& agent_backend_name() const { return agent_backend_name_; }

 private:
  struct GpuEntry {
    GpuInfo info;
    std::vector<int> sm_clocks_mhz;      // highest first
    std::vector<int> memory_clocks_mhz;  // highest first
    std::optional<PowerLimitsMw> power_limits;
    bool energy_counter = false;
  };
  // What this backend set on a GPU, to set again after a lease was taken again.
  struct GpuSettings {
    std::optional<std::pair<int, int>> sm_mhz;
    std::optional<std::pair<int, int>> memory_mhz;
    std::optional<int64_t> power_limit_mw;

    std::optional<std::pair<int, int>>& clocks_mhz(ClockKind kind) {
      return kind == ClockKind::kSm ? sm_mhz : memory_mhz;
    }
  };
  struct HeldLease {
    std::string id;
    std::vector<int> gpus;
  };

  explicit AgentBackend(AgentBackendOptions options, std::unique_ptr<http::HttpClient> client);
  Status Discover();
  Result<std::string> Call(const std::string& method, const std::string& path, const std::string& body,
                           int* status = nullptr);
  Result<std::string> CallOn(http::HttpClient& client, const std::string& method, const std::string& path,
                             const std::string& body, int* status);
  Result<double> ReadField(int gpu, const char* field);
  Status CheckGpu(int gpu) const;

  // Locks (PUT) or resets (DELETE) the clocks of `kind` through the agent, and keeps
  // what was set to set it again after a lease is taken again.
  Status LockClocks(ClockKind kind, int gpu, int min_mhz, int max_mhz);
  Status ResetClocks(ClockKind kind, int gpu);

  // Under mu_.
  Status EnsureLeased(int gpu);
  Result<HeldLease> TakeLease(const std::vector<int>& gpus);
  // Takes `lost` again and sets again what this backend had set on its GPUs.
  Status RetakeLease(const HeldLease& lost, const std::string& why);
  // A setter's request on `gpu` (leased first); a 403 for a lease the agent forgot retakes it once.
  Status Set(int gpu, const std::string& method, const std::string& what, const std::string& body);
  Status Apply(int gpu, const std::string& method, const std::string& what, const std::string& body);
  std::optional<size_t> LeaseIndexOf(int gpu) const;
  void Log(const std::string& line) const;

  void RenewLoop();
  void StopRenewing();

  AgentBackendOptions options_;
  std::unique_ptr<http::HttpClient> client_;
  // The renewals' own connection (Unix socket: the lease is the process's); null over TCP.
  std::unique_ptr<http::HttpClient> renew_client_;
  std::string agent_backend_name_;
  std::vector<GpuEntry> gpus_;

  mutable std::mutex mu_;
  std::vector<HeldLease> leases_;
  std::map<int, GpuSettings> settings_;
  uint64_t leases_retaken_ = 0;
  bool stopping_ = false;
  std::condition_variable renew_cv_;
  std::thread renewer_;
};

}  // namespace wattcut
