#include "wattcut/agent/node_agent.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>

#include "wattcut/agent/agent_state_file.h"
#include "wattcut/agent/process_ancestry.h"
#include "wattcut/base/index_ranges.h"
#include "wattcut/base/steady_time.h"
#include "wattcut/base/unix_time.h"

namespace wattcut::agent {

NodeAgent::NodeAgent(std::unique_ptr<GpuBackend> backend, NodeAgentOptions options)
    : backend_(std::move(backend)), options_(std::move(options)) {
  if (!options_.steady_now_s) options_.steady_now_s = SteadyNowS;
  if (!options_.unix_now_s) options_.unix_now_s = UnixNowS;
}

Result<std::unique_ptr<NodeAgent>> NodeAgent::Open(std::unique_ptr<GpuBackend> backend, NodeAgentOptions options) {
  if (!options.state_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(options.state_dir, error);
    if (error) return Error{"--state-dir " + options.state_dir + " cannot be created: " + error.message()};
  }
  std::unique_ptr<NodeAgent> agent(new NodeAgent(std::move(backend), std::move(options)));
  if (Status s = agent->Discover(); !s.ok()) return s.error();
  agent->ResetAtStartup();
  if (agent->options_.reap_interval_s > 0) {
    NodeAgent* self = agent.get();
    agent->reaper_ = std::thread([self] {
      const int interval_ms = std::max(1, static_cast<int>(std::lround(self->options_.reap_interval_s * 1000)));
      while (!self->stopping_) {
        self->processes_.WaitForExit(interval_ms);
        if (!self->stopping_) self->Reap();
      }
    });
  }
  return agent;
}

NodeAgent::~NodeAgent() {
  stopping_ = true;
  processes_.Wake();
  if (reaper_.joinable()) reaper_.join();
  MutexLock lock(mu_);
  EndLeases(leases_.EndAll());
}

// name() is what the backend is ("nvml", "dry-run(nvml)"), fixed when it is made: no NVML call,
// so it needs no lock (and never waits behind one).
std::string NodeAgent::backend_name() const NO_THREAD_SAFETY_ANALYSIS { return backend_->name(); }

bool NodeAgent::amd_gpus() const { return backend_name().find("rocm-smi") != std::string::npos; }

void NodeAgent::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::cerr << "wattcut agent: " << line << "\n";
  }
}

Status NodeAgent::Discover() {
  MutexLock lock(mu_);  // no other thread runs yet; taken for the guarded members it fills
  auto count = backend_->DeviceCount();
  if (!count.ok()) return count.error().WithContext("cannot count the GPUs: ");
  for (int gpu = 0; gpu < *count; ++gpu) {
    auto description = DescribeGpu(*backend_, gpu);
    if (!description.ok()) return description.error();
    descriptions_.push_back(*description);
    owners_.emplace_back(std::move(*description), [this](const std::string& nvml_error_name) {
      if (options_.observer.on_device_error) options_.observer.on_device_error(nvml_error_name);
    });
  }
  leases_ = LeaseTable(*count);
  return Status::Ok();
}

void NodeAgent::ResetAtStartup() {
  MutexLock lock(mu_);
  AgentStateFile stored;
  if (!options_.state_dir.empty()) {
    std::string warning;
    auto loaded = LoadAgentState(options_.state_dir, warning);
    if (!warning.empty()) {
      Log(warning);
      startup_problems_.push_back(warning);
    }
    if (loaded.ok()) {
      stored = *loaded;
    } else {
      Log(loaded.error().message);
      startup_problems_.push_back(loaded.error().message);
    }
  }
  jobs_.Restore(stored.jobs);
  for (const NodeJob& job : stored.jobs) {
    Log("job " + job.id + " (uid " + std::to_string(job.uid) + ", GPUs " + IndexRangesText(job.gpus) +
        ") kept from before the restart");
  }
  const double now_s = options_.unix_now_s();
  for (GpuOwner& owner : owners_) {
    const int gpu = owner.index();
    std::optional<Ceiling> ceiling;
    for (const StoredCeiling& c : stored.ceilings) {
      if (c.gpu == gpu && c.expires_at_unix_s > now_s) ceiling = Ceiling{c.mhz, c.reason, c.expires_at_unix_s};
    }
    const std::vector<std::string> problems =
        owner.Start(*backend_, ceiling, std::ranges::count(stored.power_limit_changed_gpus, gpu) > 0);
    startup_problems_.insert(startup_problems_.end(), problems.begin(), problems.end());
    if (ceiling && owner.control().sm_applied_known) {
      Log("GPU " + std::to_string(gpu) + ": ceiling of " + std::to_string(ceiling->mhz) +
          " MHz kept from before the restart (" + std::to_string(static_cast<int64_t>(CeilingSecondsLeft(*ceiling))) +
          " s left)");
    }
  }
  for (const std::string& problem : startup_problems_) Log(problem);
  SaveState();
}

Status NodeAgent::CheckGpu(int gpu) const {
  if (gpu < 0 || gpu >= static_cast<int>(owners_.size())) {
    return Error::NotFound("GPU " + std::to_string(gpu) + " does not exist (" + std::to_string(owners_.size()) +
                           " GPUs)");
  }
  return Status::Ok();
}

void NodeAgent::Command(const std::string& command, bool ok) {
  if (options_.observer.on_command) options_.observer.on_command(command, ok);
}

void NodeAgent::Command(const std::string& command, const Status& done) {
  if (done.ok() || done.error().code != ErrorCode::kInvalidArgument) Command(command, done.ok());
}

GpuControl NodeAgent::ControlOf(int gpu) const {
  GpuControl control = owners_[static_cast<size_t>(gpu)].control();
  const Lease* lease = leases_.LeaseOf(gpu);
  control.lease = lease != nullptr ? std::optional<Lease>(*lease) : std::nullopt;
  return control;
}

std::vector<GpuReading> NodeAgent::Read() { return ReadGpus(/*power_only=*/false); }

std::vector<GpuReading> NodeAgent::ReadPower() { return ReadGpus(/*power_only=*/true); }

std::vector<GpuReading> NodeAgent::ReadGpus(bool power_only) {
  MutexLock lock(mu_);
  std::vector<GpuReading> readings;
  for (const GpuOwner& owner : owners_) readings.push_back(owner.Read(*backend_, power_only));
  return readings;
}

Result<bool> NodeAgent::PersistenceMode(int gpu) {
  MutexLock lock(mu_);
  if (Status s = CheckGpu(gpu); !s.ok()) return s.error();
  return backend_->PersistenceMode(gpu);
}

Status NodeAgent::WatchIfProcess(const LeaseHolder& holder) {
  if (holder.kind != LeaseHolder::Kind::kProcess) return Status::Ok();
  if (holder.pid <= 0) {
    return Error::PermissionDenied(
        "the agent cannot see your process (pid 0: another pid namespace): run the agent in the host's pid "
        "namespace (Kubernetes: hostPID: true)");
  }
  return processes_.Watch(holder.pid);
}

Result<Lease> NodeAgent::TakeLease(const LeaseHolder& holder, const std::vector<int>& gpus, double ttl_s) {
  MutexLock lock(mu_);
  if (Status s = CheckJobAllows(holder, gpus); !s.ok()) {
    Command("lease", false);
    return s.error();
  }
  if (Status s = WatchIfProcess(holder); !s.ok()) return s.error();
  auto lease = leases_.Acquire(holder, gpus, ttl_s, options_.steady_now_s());
  if (!lease.ok()) WatchOnlyLeaseHolders();  // refused: the process was watched for nothing
  Command("lease", lease.ok());
  if (!lease.ok()) return lease;
  Log("lease " + std::to_string(lease->id) + " of " + holder.Description());
  if (!holder.job_id.empty()) {
    const NodeJob* job = jobs_.Find(holder.job_id);
    if (job != nullptr && !job->touched) {
      jobs_.MarkTouched(holder.job_id);
      SaveState();
    }
  }
  return lease;
}

Result<LeaseHolder> NodeAgent::ImplicitLeaseHolder(const LeaseHolder& caller, int gpu, uint64_t connection_id) {
  MutexLock lock(mu_);
  if (Status s = CheckGpu(gpu); !s.ok()) return s.error();
  if (caller.kind == LeaseHolder::Kind::kZeusdClient) zeusd_clients_.Seen(caller, connection_id);
  if (const Lease* lease = leases_.LeaseOf(gpu)) {
    if (lease->holder == caller) return caller;
    const LeaseHolder& holder = lease->holder;
    if (caller.kind == LeaseHolder::Kind::kProcess && holder.kind == LeaseHolder::Kind::kProcess &&
        holder.uid == caller.uid && DescendsFrom(caller.pid, holder.pid)) {
      return holder;
    }
    return Error::Conflict("GPU " + std::to_string(gpu) + " is leased by " + holder.Description());
  }
  if (Status s = CheckJobAllows(caller, {gpu}); !s.ok()) return s.error();
  if (Status s = WatchIfProcess(caller); !s.ok()) return s.error();
  auto lease = leases_.Acquire(caller, {gpu}, kImplicitLeaseTtlS, options_.steady_now_s());
  if (!lease.ok()) {
    WatchOnlyLeaseHolders();
    return lease.error();
  }
  Command("lease", true);
  Log("implicit lease " + std::to_string(lease->id) + " of GPU " + std::to_string(gpu) + " for " +
      caller.Description() + " (zeusd API)");
  return caller;
}

bool NodeAgent::ZeusdClientSeen(const LeaseHolder& client, uint64_t connection_id) {
  MutexLock lock(mu_);
  return zeusd_clients_.SeenIfKnown(client, connection_id);
}

Result<Lease> NodeAgent::RenewLease(uint64_t id, const LeaseHolder& holder) {
  MutexLock lock(mu_);
  return leases_.Renew(id, holder, options_.steady_now_s());
}

Result<EndedLease> NodeAgent::ReleaseLease(uint64_t id, const LeaseHolder& holder) {
  MutexLock lock(mu_);
  auto ended = leases_.Release(id, holder);
  if (!ended.ok()) return ended.error();
  EndLeases({*ended});
  return ended;
}

void NodeAgent::EndLeases(std::vector<EndedLease> ended) {
  if (ended.empty()) return;
  for (const EndedLease& e : ended) {
    for (int gpu : e.lease.gpus) {
      for (const std::string& problem : Owner(gpu).UndoHolder(*backend_, /*force=*/false)) Log(problem);
    }
    Log("lease " + std::to_string(e.lease.id) + " of " + e.lease.holder.Description() + " ended (" +
        LeaseEndName(e.reason) + "): its GPUs are back to " +
        (Owner(e.lease.gpus.front()).control().ceiling ? "their ceiling" : "their defaults"));
    if (options_.observer.on_lease_end) options_.observer.on_lease_end(e);
  }
  WatchOnlyLeaseHolders();
  SaveState();
}

void NodeAgent::WatchOnlyLeaseHolders() {
  std::set<int> holders;
  for (const Lease& lease : leases_.Leases()) {
    if (lease.holder.kind == LeaseHolder::Kind::kProcess) holders.insert(lease.holder.pid);
  }
  processes_.Retain(holders);
}

size_t NodeAgent::watched_processes() { return processes_.size(); }

Result<GpuControl> NodeAgent::ChangeAsHolder(const LeaseHolder& holder, int gpu, const std::string& command,
                                             const std::function<Status(GpuOwner&, GpuBackend&)>& change) {
  if (Status s = leases_.CheckHolds(holder, gpu); !s.ok()) return s.error();
  const Status done = change(Owner(gpu), *backend_);
  Command(command, done);
  if (!done.ok()) return done.error();
  return ControlOf(gpu);
}

Result<GpuControl> NodeAgent::LockClocks(const LeaseHolder& holder, int gpu, ClockKind kind, ClockRange range) {
  MutexLock lock(mu_);
  return ChangeAsHolder(
      holder, gpu, "lock_" + std::string(ClockKindId(kind)),
      [kind, range](GpuOwner& owner, GpuBackend& backend) { return owner.SetClockLock(backend, kind, range); });
}

Result<GpuControl> NodeAgent::UnlockClocks(const LeaseHolder& holder, int gpu, ClockKind kind) {
  MutexLock lock(mu_);
  return ChangeAsHolder(
      holder, gpu, "unlock_" + std::string(ClockKindId(kind)),
      [kind](GpuOwner& owner, GpuBackend& backend) { return owner.SetClockLock(backend, kind, std::nullopt); });
}

Result<GpuControl> NodeAgent::SetPowerLimit(const LeaseHolder& holder, int gpu, double watts) {
  MutexLock lock(mu_);
  auto control = ChangeAsHolder(holder, gpu, "set_power_limit", [watts](GpuOwner& owner, GpuBackend& backend) {
    return owner.SetPowerLimit(backend, watts);
  });
  if (control.ok()) SaveState();
  return control;
}

Result<GpuControl> NodeAgent::ResetPowerLimit(const LeaseHolder& holder, int gpu) {
  MutexLock lock(mu_);
  auto control = ChangeAsHolder(holder, gpu, "reset_power_limit",
                                [](GpuOwner& owner, GpuBackend& backend) { return owner.ResetPowerLimit(backend); });
  if (control.ok()) SaveState();
  return control;
}

Result<GpuControl> NodeAgent::SetCeiling(int gpu, int mhz, double lease_s, const std::string& reason) {
  MutexLock lock(mu_);
  if (Status s = CheckGpu(gpu); !s.ok()) return s.error();
  const Status done = Owner(gpu).SetCeiling(*backend_, mhz, options_.unix_now_s() + lease_s, reason);
  if (!done.ok() && done.error().code == ErrorCode::kInvalidArgument) return done.error();
  Command("set_ceiling", done);
  SaveState();  // the ceiling holds even when NVML refused it: the next change applies it
  if (!done.ok()) return done.error();
  return ControlOf(gpu);
}

Result<GpuControl> NodeAgent::ClearCeiling(int gpu) {
  MutexLock lock(mu_);
  if (Status s = CheckGpu(gpu); !s.ok()) return s.error();
  const Status done = Owner(gpu).ClearCeiling(*backend_);
  Command("clear_ceiling", done);
  SaveState();
  if (!done.ok()) return done.error();
  return ControlOf(gpu);
}

std::vector<GpuControl> NodeAgent::Controls() {
  MutexLock lock(mu_);
  std::vector<GpuControl> all;
  for (const GpuOwner& owner : owners_) all.push_back(ControlOf(owner.index()));
  return all;
}

double NodeAgent::CeilingSecondsLeft(const Ceiling& ceiling) const {
  return std::max(0.0, ceiling.expires_at_unix_s - options_.unix_now_s());
}

void NodeAgent::Reap() {
  MutexLock lock(mu_);
  const double steady_s = options_.steady_now_s();
  EndLeases(leases_.EndLeases(steady_s, [this, steady_s](const LeaseHolder& holder) {
    mu_.AssertHeld();  // LeaseTable::EndLeases calls it here, under the lock Reap holds
    if (holder.kind == LeaseHolder::Kind::kZeusdClient) {
      return zeusd_clients_.Alive(holder, steady_s, options_.zeusd_reconnect_grace_s);
    }
    return holder.kind != LeaseHolder::Kind::kProcess || processes_.Alive(holder.pid);
  }));
  zeusd_clients_.ForgetIdle(leases_.Leases());
  LiftExpiredCeilings();
}

void NodeAgent::LiftExpiredCeilings() {
  const double now_s = options_.unix_now_s();
  bool lifted = false;
  for (GpuOwner& owner : owners_) {
    const auto ceiling = owner.LiftCeilingIfExpired(*backend_, now_s);
    if (!ceiling) continue;
    const std::string who = "GPU " + std::to_string(owner.index()) + ": ";
    Log(who + "the ceiling of " + std::to_string(ceiling->ceiling.mhz) + " MHz ran out its lease");
    if (!ceiling->applied.ok()) Log(who + ceiling->applied.error().message);
    lifted = true;
  }
  if (lifted) SaveState();
}

void NodeAgent::ConnectionClosed(uint64_t connection_id) {
  MutexLock lock(mu_);
  EndLeases(leases_.EndConnection(connection_id));
  zeusd_clients_.ConnectionClosed(connection_id, options_.steady_now_s());
}

void NodeAgent::SaveState() {
  if (options_.state_dir.empty()) return;
  AgentStateFile state;
  for (const GpuOwner& owner : owners_) {
    const GpuControl& control = owner.control();
    if (control.ceiling) {
      state.ceilings.push_back(
          {control.index, control.ceiling->mhz, control.ceiling->reason, control.ceiling->expires_at_unix_s});
    }
    if (control.power_limit_mw) state.power_limit_changed_gpus.push_back(control.index);
  }
  state.jobs = jobs_.Jobs();
  if (Status s = SaveAgentState(options_.state_dir, state); !s.ok()) {
    Log(s.error().message + " (the ceilings and jobs hold now, but would not survive a restart of the agent)");
  }
}

}  // namespace wattcut::agent
