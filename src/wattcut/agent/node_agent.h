// The node agent's core, without HTTP: it owns the node's GPU backend (the only one opened on the
// node), one GpuOwner per GPU (gpu_owner.h: what is asked of the GPU, checked, applied, recorded),
// the leases (lease_table.h) and the batch jobs (job_table.h), as the planning server's
// JobRegistry owns its jobs. A request walks route -> NodeAgent (who may act: the lease, the job)
// -> GpuOwner (what the GPU supports; applied to NVML) -> GpuBackend (docs/agent.md, "Inside").
//
//  * Open: discovers the GPUs (their supported clocks and power-limit range are cached: requests
//    are checked against them), resets every GPU's SM and memory clocks (nobody holds one yet),
//    puts back the power limits a previous run changed and re-applies the ceilings whose lease
//    has not run out (agent_state_file.h, with a state folder).
//  * Every change is applied to NVML at once, under one lock; an NVML error comes back as
//    kDeviceError naming the GPU and NVML's error, and leaves the agent's view "not applied" so
//    the next change tries again.
//  * Batch jobs (job_table.h) are registered by root (the Slurm plugin) with their owner and GPUs;
//    a process presenting a job's credential may lease only that job's GPUs, and only as the
//    job's owner. With require_job_credential, a process that is not root must present one.
//    EndJob ends the job's leases, resets the GPUs it used and tells the energy they used.
//  * A thread (unless reap_interval_s is 0; tests then call Reap) ends the leases of processes that
//    exited, the moment they exit (process_watch.h), and of holders that missed their renewal,
//    checked every reap_interval_s; expired ceilings are lifted the same way.
// Thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "wattcut/agent/gpu_owner.h"
#include "wattcut/agent/job_energy.h"
#include "wattcut/agent/job_table.h"
#include "wattcut/agent/lease_table.h"
#include "wattcut/agent/process_watch.h"
#include "wattcut/agent/zeusd_clients.h"
#include "wattcut/base/mutex.h"
#include "wattcut/base/result.h"
#include "wattcut/gpu/clock_kind.h"
#include "wattcut/gpu/gpu_backend.h"

namespace wattcut::agent {

struct NodeAgentObserver {
  std::function<void(const std::string& command, bool ok)> on_command;  // "lock_sm", "set_ceiling", ...
  std::function<void(const EndedLease&)> on_lease_end;
  std::function<void(const std::string& nvml_error_name)> on_device_error;  // "NVML_ERROR_NO_PERMISSION", "other"
};

struct NodeAgentOptions {
  std::string state_dir;                        // empty: ceilings and changed power limits are not kept across restarts
  double reap_interval_s = 0.1;                 // 0: no thread (tests call Reap)
  double zeusd_reconnect_grace_s = 10;          // see ImplicitLeaseHolder
  std::function<void(const std::string&)> log;  // one line per event; default stderr
  std::function<double()> steady_now_s;         // leases; default steady_clock
  std::function<double()> unix_now_s;           // ceilings; default system_clock
  NodeAgentObserver observer;
  // A process that is not root takes a GPU only with a batch job's credential (LeaseHolder::job_id).
  bool require_job_credential = false;
};

class NodeAgent {
 public:
  static Result<std::unique_ptr<NodeAgent>> Open(std::unique_ptr<GpuBackend> backend, NodeAgentOptions options);
  // Ends every lease (undoing what its holder set); ceilings stay, as stored.
  ~NodeAgent();

  const std::vector<GpuDescription>& gpus() const { return descriptions_; }
  std::string backend_name() const;
  // Whether the GPUs are AMD's (the ROCm SMI backend, or a dry run of it): where the APIs answer in
  // AMD's terms (its exporter's metric names, zeusd's AMD errors).
  bool amd_gpus() const;
  // Problems met while resetting the GPUs at start-up (the agent serves anyway).
  const std::vector<std::string>& startup_problems() const { return startup_problems_; }

  std::vector<GpuReading> Read() EXCLUDES(mu_);
  // Only the power of every GPU (power_w and the power fields): what zeusd's get_power and its
  // 20 Hz stream need, a third of Read's NVML calls under the lock the setters take.
  std::vector<GpuReading> ReadPower() EXCLUDES(mu_);
  // NVML's persistence mode of `gpu` (kNotFound where the backend does not read it).
  Result<bool> PersistenceMode(int gpu) EXCLUDES(mu_);

  Result<Lease> TakeLease(const LeaseHolder& holder, const std::vector<int>& gpus, double ttl_s) EXCLUDES(mu_);
  Result<Lease> RenewLease(uint64_t id, const LeaseHolder& holder) EXCLUDES(mu_);
  Result<EndedLease> ReleaseLease(uint64_t id, const LeaseHolder& holder) EXCLUDES(mu_);

  // zeusd's setters (zeusd_routes.h) come without a lease: the holder to act as on `gpu` for
  // `caller`. That is the caller, when it holds the GPU or now takes it by an implicit lease (no
  // ttl: it ends when its process exits or its TCP connection closes, and what was set is undone,
  // as with any lease), or the process the caller descends from (same uid) that holds the GPU:
  // Zeus's frequency controller sets clocks from a process it forks. kConflict when another holds
  // it; kNotFound for a GPU that does not exist. A zeusd client over TCP (LeaseHolder::ZeusdClient)
  // is alive while a connection it asked on (`connection_id`) is open, and for
  // NodeAgentOptions::zeusd_reconnect_grace_s after its last one closed: an HTTP client recycles connections (httpx
  // closes one idle for 5 s when it next asks), and the new one, from the same user and address, carries the lease on.
  Result<LeaseHolder> ImplicitLeaseHolder(const LeaseHolder& caller, int gpu, uint64_t connection_id = 0) EXCLUDES(mu_);
  // A zeusd client over TCP asked something (a read too) on `connection_id`: when it holds a lease,
  // that connection keeps it alive as well; true then (the caller keeps the connection open).
  bool ZeusdClientSeen(const LeaseHolder& client, uint64_t connection_id) EXCLUDES(mu_);
  static constexpr double kImplicitLeaseTtlS = 1e12;

  // The training side. `range` must be supported clocks of `kind` (min <= max); the lease holder
  // only. The SM lock is composed with the row's ceiling (ComposeSmClocks); the memory lock is set
  // as it is.
  Result<GpuControl> LockClocks(const LeaseHolder& holder, int gpu, ClockKind kind, ClockRange range) EXCLUDES(mu_);
  Result<GpuControl> UnlockClocks(const LeaseHolder& holder, int gpu, ClockKind kind) EXCLUDES(mu_);
  // The same, of one kind.
  Result<GpuControl> LockSmClocks(const LeaseHolder& holder, int gpu, ClockRange range) {
    return LockClocks(holder, gpu, ClockKind::kSm, range);
  }
  Result<GpuControl> UnlockSmClocks(const LeaseHolder& holder, int gpu) {
    return UnlockClocks(holder, gpu, ClockKind::kSm);
  }
  Result<GpuControl> LockMemoryClocks(const LeaseHolder& holder, int gpu, ClockRange range) {
    return LockClocks(holder, gpu, ClockKind::kMemory, range);
  }
  Result<GpuControl> UnlockMemoryClocks(const LeaseHolder& holder, int gpu) {
    return UnlockClocks(holder, gpu, ClockKind::kMemory);
  }
  Result<GpuControl> SetPowerLimit(const LeaseHolder& holder, int gpu, double watts) EXCLUDES(mu_);
  Result<GpuControl> ResetPowerLimit(const LeaseHolder& holder, int gpu) EXCLUDES(mu_);

  // The row side: a ceiling rounded down to a supported clock, in force for `lease_s`.
  Result<GpuControl> SetCeiling(int gpu, int mhz, double lease_s, const std::string& reason) EXCLUDES(mu_);
  Result<GpuControl> ClearCeiling(int gpu) EXCLUDES(mu_);

  // Batch jobs. RegisterJob is the admin's (root on the socket): a new job gets a fresh credential
  // and its GPUs' energy counters are read; registering it again (same owner) keeps both and adds
  // `gpus`. `gpus` nullopt: every GPU of the node for a new job, no change for a registered one.
  // kNotFound for a GPU that does not exist, kConflict for another owner.
  Result<JobTable::Registered> RegisterJob(const std::string& id, int uid, const std::optional<std::vector<int>>& gpus)
      EXCLUDES(mu_);
  // Ends the job: its leases end (what they set is undone), every GPU it used is reset (SM clocks
  // back to any ceiling, memory clocks, power limit), even when its processes are gone, and its
  // credential stops working. kNotFound for a job that is not registered.
  Result<JobEnd> EndJob(const std::string& id) EXCLUDES(mu_);
  // What a registered job's GPUs used so far (kNotFound for a job that is not registered).
  Result<JobEnergy> JobEnergySoFar(const std::string& id) EXCLUDES(mu_);
  std::optional<JobTable::CredentialMatch> JobOfCredential(std::string_view presented) EXCLUDES(mu_);
  std::vector<NodeJob> Jobs() EXCLUDES(mu_);

  std::vector<GpuControl> Controls() EXCLUDES(mu_);
  // Seconds until a ceiling's lease runs out (for answers).
  double CeilingSecondsLeft(const Ceiling& ceiling) const;

  // Ends the leases of holders that are gone or missed their renewal and lifts expired ceilings.
  void Reap() EXCLUDES(mu_);
  // A TCP connection closed: its leases end.
  void ConnectionClosed(uint64_t connection_id) EXCLUDES(mu_);
  // How many processes the agent watches for their exit (those that hold a lease).
  size_t watched_processes();

 private:
  NodeAgent(std::unique_ptr<GpuBackend> backend, NodeAgentOptions options);
  Status Discover() EXCLUDES(mu_);
  void ResetAtStartup() EXCLUDES(mu_);

  std::vector<GpuReading> ReadGpus(bool power_only) EXCLUDES(mu_);
  // Under mu_.
  Status CheckGpu(int gpu) const REQUIRES(mu_);
  GpuOwner& Owner(int gpu) REQUIRES(mu_) { return owners_[static_cast<size_t>(gpu)]; }
  // `holder` holds `gpu`'s lease; then `change` is made by the GPU's owner and counted as
  // `command`; the GPU's view after it.
  Result<GpuControl> ChangeAsHolder(const LeaseHolder& holder, int gpu, const std::string& command,
                                    const std::function<Status(GpuOwner&, GpuBackend&)>& change) REQUIRES(mu_);
  void EndLeases(std::vector<EndedLease> ended) REQUIRES(mu_);
  // A process about to hold a lease is watched for its exit; one the agent cannot see (pid 0) is refused.
  Status WatchIfProcess(const LeaseHolder& holder) REQUIRES(mu_);
  // Watches exactly the processes that hold a lease (after every lease change).
  void WatchOnlyLeaseHolders() REQUIRES(mu_);
  // Whether `holder` may take `gpus` as far as batch jobs go (see require_job_credential).
  Status CheckJobAllows(const LeaseHolder& holder, const std::vector<int>& gpus) const REQUIRES(mu_);
  // Resets what a job that used its GPUs left on them (a GPU another holder leased since is
  // that holder's); the problems, one line each.
  std::vector<std::string> ResetJobGpus(const NodeJob& job, std::vector<int>& reset_gpus) REQUIRES(mu_);
  void LiftExpiredCeilings() REQUIRES(mu_);
  void SaveState() REQUIRES(mu_);
  GpuControl ControlOf(int gpu) const REQUIRES(mu_);
  // A command sent to a GPU (or a lease or job change), counted for /metrics. A change the check
  // refused (kInvalidArgument) never reached the GPU: it is no command.
  void Command(const std::string& command, const Status& done);
  void Command(const std::string& command, bool ok);
  void Log(const std::string& line) const;

  // Every NVML call is made under mu_.
  std::unique_ptr<GpuBackend> backend_ PT_GUARDED_BY(mu_);
  NodeAgentOptions options_;
  // The owners' descriptions, copied by Open and then only read: gpus() answers without the lock.
  std::vector<GpuDescription> descriptions_;
  std::vector<std::string> startup_problems_;  // filled by Open, then only read

  // The lock order: mu_ first, then ProcessWatch's own (processes_ is called under mu_) or the
  // observer's (options_.observer's callbacks, AgentCounters's mutex in the agent, run under mu_);
  // neither of those is held while calling out. The GPUs' owners have no lock of their own: every
  // NVML call is made under mu_ (one backend for the node), so one per GPU would add only an order.
  mutable Mutex mu_ ACQUIRED_BEFORE(processes_.mu_);
  std::vector<GpuOwner> owners_ GUARDED_BY(mu_);  // by GPU index
  LeaseTable leases_ GUARDED_BY(mu_) = LeaseTable(0);
  JobTable jobs_ GUARDED_BY(mu_);
  ZeusdClients zeusd_clients_ GUARDED_BY(mu_);
  // Thread-safe on its own: the reaper waits on it without mu_.
  ProcessWatch processes_;

  std::atomic<bool> stopping_{false};
  std::thread reaper_;
};

}  // namespace wattcut::agent
