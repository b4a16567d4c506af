#include "wattcut/agent/node_agent.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>

#include <openssl/rand.h>

#include "wattcut/agent/agent_state_file.h"
#include "wattcut/agent/process_ancestry.h"
#include "wattcut/base/index_ranges.h"
#include "wattcut/base/steady_time.h"
#include "wattcut/base/unix_time.h"

namespace wattcut::agent {

namespace {

bool Contains(const std::vector<int>& values, int value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// "NVML_ERROR_NO_PERMISSION" out of an NVML backend's message; "other" when there is none.
std::string NvmlErrorName(const std::string& message) {
  const size_t at = message.find("NVML_ERROR_");
  if (at == std::string::npos) return "other";
  size_t end = at;
  while (end < message.size() && ((message[end] >= 'A' && message[end] <= 'Z') || message[end] == '_')) ++end;
  return message.substr(at, end - at);
}

// 32 random bytes as 64 hex characters: a job's credential.
Result<std::string> NewCredential() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) return Error{"cannot make a job credential: no randomness (RAND_bytes)"};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  for (unsigned char b : bytes) {
    text += kHex[b >> 4];
    text += kHex[b & 15];
  }
  return text;
}

}  // namespace

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
    GpuDescription d;
    d.index = gpu;
    auto info = backend_->Info(gpu);
    if (!info.ok()) return info.error().WithContext("GPU " + std::to_string(gpu) + ": ");
    d.uuid = info->uuid;
    d.pci_address = info->pci_address;
    d.name = info->name;
    auto memory = backend_->SupportedMemoryClocksMhz(gpu);
    if (!memory.ok()) return memory.error().WithContext("GPU " + std::to_string(gpu) + ": ");
    d.memory_clocks_mhz = *memory;
    auto sm = SupportedSmClocksMhz(*backend_, gpu);
    if (!sm.ok()) return sm.error().WithContext("GPU " + std::to_string(gpu) + ": ");
    if (sm->empty()) return Error{"GPU " + std::to_string(gpu) + " reports no supported SM clocks"};
    d.sm_clocks_mhz = *sm;
    auto limits = backend_->PowerLimits(gpu);
    if (limits.ok()) d.power_limits = *limits;
    d.energy_counter = backend_->TotalEnergyMj(gpu).ok();
    gpus_.push_back(std::move(d));
    GpuControl control;
    control.index = gpu;
    controls_.push_back(control);
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
  for (const StoredCeiling& c : stored.ceilings) {
    if (c.gpu < 0 || c.gpu >= static_cast<int>(controls_.size()) || c.expires_at_unix_s <= now_s) continue;
    controls_[static_cast<size_t>(c.gpu)].ceiling = Ceiling{c.mhz, c.reason, c.expires_at_unix_s};
  }
  for (GpuControl& control : controls_) {
    const int gpu = control.index;
    const std::string who = "GPU " + std::to_string(gpu) + ": ";
    if (Status s = backend_->ResetMemoryClocks(gpu); !s.ok()) {
      startup_problems_.push_back(who + "cannot reset the memory clocks: " + s.error().message);
    }
    if (Contains(stored.power_limit_changed_gpus, gpu)) {
      if (Status s = wattcut::ResetPowerLimit(*backend_, gpu); !s.ok()) {
        startup_problems_.push_back(who + "cannot put the power limit back to its default: " + s.error().message);
      }
    }
    // Reset first, whatever NVML had: a ceiling is then applied on top of a known state.
    if (Status s = backend_->ResetGpuClocks(gpu); !s.ok()) {
      startup_problems_.push_back(who + "cannot reset the SM clocks: " + s.error().message);
      control.sm_applied_known = false;
    } else {
      control.sm_applied = std::nullopt;
    }
    if (control.ceiling) {
      if (Status s = ApplySm(gpu); !s.ok()) {
        startup_problems_.push_back(who + "cannot apply the stored ceiling: " + s.error().message);
      } else {
        Log(who + "ceiling of " + std::to_string(control.ceiling->mhz) + " MHz kept from before the restart (" +
            std::to_string(static_cast<int64_t>(CeilingSecondsLeft(*control.ceiling))) + " s left)");
      }
    }
  }
  for (const std::string& problem : startup_problems_) Log(problem);
  SaveState();
}

Status NodeAgent::CheckGpu(int gpu) const {
  if (gpu < 0 || gpu >= static_cast<int>(gpus_.size())) {
    return Error::NotFound("GPU " + std::to_string(gpu) + " does not exist (" + std::to_string(gpus_.size()) +
                           " GPUs)");
  }
  return Status::Ok();
}

Error NodeAgent::DeviceError(const Error& error) {
  if (options_.observer.on_device_error) options_.observer.on_device_error(NvmlErrorName(error.message));
  return Error::DeviceError(error.message);
}

void NodeAgent::Command(const std::string& command, bool ok) {
  if (options_.observer.on_command) options_.observer.on_command(command, ok);
}

Status NodeAgent::ApplySm(int gpu) {
  GpuControl& control = controls_[static_cast<size_t>(gpu)];
  const GpuDescription& d = gpus_[static_cast<size_t>(gpu)];
  const std::optional<int> ceiling = control.ceiling ? std::optional<int>(control.ceiling->mhz) : std::nullopt;
  const std::optional<ClockRange> wanted = ComposeSmClocks(control.sm_lock, ceiling, d.sm_clocks_mhz.back());
  if (control.sm_applied_known && control.sm_applied == wanted) return Status::Ok();
  Status s = wanted ? backend_->LockGpuClocks(gpu, wanted->min_mhz, wanted->max_mhz) : backend_->ResetGpuClocks(gpu);
  if (!s.ok()) {
    control.sm_applied_known = false;
    return DeviceError(s.error());
  }
  control.sm_applied = wanted;
  control.sm_applied_known = true;
  return Status::Ok();
}

GpuControl NodeAgent::ControlOf(int gpu) const {
  GpuControl control = controls_[static_cast<size_t>(gpu)];
  const Lease* lease = leases_.LeaseOf(gpu);
  control.lease = lease != nullptr ? std::optional<Lease>(*lease) : std::nullopt;
  return control;
}

std::vector<GpuReading> NodeAgent::Read() { return ReadGpus(/*power_only=*/false); }

std::vector<GpuReading> NodeAgent::ReadPower() { return ReadGpus(/*power_only=*/true); }

std::vector<GpuReading> NodeAgent::ReadGpus(bool power_only) {
  MutexLock lock(mu_);
  std::vector<GpuReading> readings;
  for (const GpuDescription& d : gpus_) {
    GpuReading r;
    r.index = d.index;
    auto note = [&r](const char* field, const Error& e) { r.errors.emplace_back(field, e.message); };
    if (auto v = backend_->PowerUsageMw(d.index); v.ok()) {
      r.power_w = static_cast<double>(*v) / 1000.0;
    } else {
      note("power_w", v.error());
    }
    // A driver or a backend without the power fields is no error: power_w is all it has.
    if (auto v = backend_->PowerFields(d.index); v.ok()) {
      if (v->instant_mw) r.power_instant_w = static_cast<double>(*v->instant_mw) / 1000.0;
      if (v->average_mw) r.power_average_w = static_cast<double>(*v->average_mw) / 1000.0;
    } else if (v.error().code != ErrorCode::kNotFound) {
      note("power_instant_w", v.error());
    }
    if (power_only) {
      readings.push_back(std::move(r));
      continue;
    }
    if (auto v = backend_->TotalEnergyMj(d.index); v.ok()) {
      r.energy_mj = *v;
    } else {
      note("energy_mj", v.error());
    }
    if (auto v = backend_->SmClockMhz(d.index); v.ok()) {
      r.sm_clock_mhz = *v;
    } else {
      note("sm_clock_mhz", v.error());
    }
    if (auto v = backend_->PowerLimitMw(d.index); v.ok()) {
      r.power_limit_w = static_cast<double>(*v) / 1000.0;
    } else {
      note("power_limit_w", v.error());
    }
    readings.push_back(std::move(r));
  }
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

Status NodeAgent::CheckJobAllows(const LeaseHolder& holder, const std::vector<int>& gpus) const {
  if (holder.kind != LeaseHolder::Kind::kProcess) return Status::Ok();
  if (holder.job_id.empty()) {
    if (!options_.require_job_credential || holder.uid == 0) return Status::Ok();
    return Error::PermissionDenied(
        "this agent gives its GPUs to batch jobs (--require-job-credential): present your job's credential "
        "(the Slurm plugin sets $WATTCUT_AGENT_TOKEN in each task of a job run with --wattcut), or ask as root");
  }
  const NodeJob* job = jobs_.Find(holder.job_id);
  if (job == nullptr) {
    return Error::PermissionDenied("job " + holder.job_id + " has ended: its credential no longer works");
  }
  if (job->uid != holder.uid) {
    return Error::PermissionDenied("the credential of job " + job->id + " is for uid " + std::to_string(job->uid) +
                                   ", not for uid " + std::to_string(holder.uid));
  }
  for (int gpu : gpus) {
    if (!Contains(job->gpus, gpu)) {
      return Error::PermissionDenied("GPU " + std::to_string(gpu) + " is not one of job " + job->id + "'s GPUs (" +
                                     IndexRangesText(job->gpus) + ")");
    }
  }
  return Status::Ok();
}

Result<JobTable::Registered> NodeAgent::RegisterJob(const std::string& id, int uid,
                                                    const std::optional<std::vector<int>>& gpus) {
  MutexLock lock(mu_);
  if (Status s = CheckJobId(id, "job"); !s.ok()) return s.error();
  if (uid < 0) return Error::InvalidArgument("'uid': expected a uid (>= 0), got " + std::to_string(uid));
  NodeJob job;
  job.id = id;
  job.uid = uid;
  const NodeJob* known = jobs_.Find(id);
  if (gpus) {
    for (int gpu : *gpus) {
      if (Status s = CheckGpu(gpu); !s.ok()) return s.error();
    }
    job.gpus = *gpus;
  } else if (known == nullptr) {
    for (const GpuDescription& d : gpus_) job.gpus.push_back(d.index);
  }
  if (known == nullptr) {
    auto credential = NewCredential();
    if (!credential.ok()) return credential.error();
    job.credential = std::move(*credential);
    job.started_at_unix_s = options_.unix_now_s();
  }
  for (int gpu : job.gpus) {
    if (known != nullptr && Contains(known->gpus, gpu)) continue;
    auto mj = backend_->TotalEnergyMj(gpu);
    job.energy_at_start_mj[gpu] = mj.ok() ? std::optional<int64_t>(*mj) : std::nullopt;
  }
  auto registered = jobs_.Register(std::move(job));
  Command("register_job", registered.ok());
  if (!registered.ok()) return registered.error();
  if (registered->created || (known != nullptr && known->gpus != registered->job.gpus)) {
    Log(std::string(registered->created ? "job " : "job (more GPUs) ") + id + " of uid " + std::to_string(uid) +
        " registered on GPUs " + IndexRangesText(registered->job.gpus));
    SaveState();
  }
  return registered;
}

Result<JobEnd> NodeAgent::EndJob(const std::string& id) {
  MutexLock lock(mu_);
  auto ended_job = jobs_.End(id);
  Command("end_job", ended_job.ok());
  if (!ended_job.ok()) return ended_job.error();
  JobEnd end;
  end.job = std::move(*ended_job);
  std::vector<std::string> problems;  // of the reset; the energy's come with it
  std::vector<EndedLease> leases = leases_.EndJob(id);
  end.leases_ended = static_cast<int>(leases.size());
  EndLeases(std::move(leases));
  if (end.job.touched) {
    // Whatever the job left, even where its leases ended before (its processes were killed): the
    // GPUs go back to their defaults, or to the row's ceiling. A GPU another holder leased since
    // is that holder's.
    for (int gpu : end.job.gpus) {
      if (const Lease* lease = leases_.LeaseOf(gpu)) {
        problems.push_back("GPU " + std::to_string(gpu) + ": not reset: leased by " + lease->holder.Description() +
                           " since");
        continue;
      }
      const std::vector<std::string> undone = UndoGpu(gpu, /*force=*/true);
      if (undone.empty()) end.reset_gpus.push_back(gpu);
      problems.insert(problems.end(), undone.begin(), undone.end());
    }
  }
  static_cast<JobEnergy&>(end) = EnergyOf(end.job);
  end.problems.insert(end.problems.begin(), problems.begin(), problems.end());
  SaveState();
  char energy[64];
  std::snprintf(energy, sizeof(energy), "%.1f J", end.total_gpu_energy_j.value_or(0));
  Log("job " + id + " of uid " + std::to_string(end.job.uid) + " ended after " +
      std::to_string(static_cast<int64_t>(end.duration_s)) + " s: GPUs " + IndexRangesText(end.job.gpus) + " used " +
      (end.total_gpu_energy_j ? std::string(energy) : std::string("an unknown energy (a GPU without a counter)")) +
      "; " + std::to_string(end.leases_ended) + " leases ended; " +
      (end.job.touched ? "GPUs " + IndexRangesText(end.reset_gpus) + " reset" : std::string("its GPUs were not used")));
  for (const std::string& problem : end.problems) Log("job " + id + ": " + problem);
  return end;
}

JobEnergy NodeAgent::EnergyOf(const NodeJob& job) {
  JobEnergy energy;
  energy.job = job;
  energy.duration_s = std::max(0.0, options_.unix_now_s() - job.started_at_unix_s);
  double total_j = 0;
  bool all_known = true;
  for (int gpu : job.gpus) {
    std::optional<double> used_j;
    auto start = job.energy_at_start_mj.find(gpu);
    const bool started = start != job.energy_at_start_mj.end() && start->second.has_value();
    auto now_mj = backend_->TotalEnergyMj(gpu);
    if (started && now_mj.ok() && *now_mj >= *start->second) {
      used_j = static_cast<double>(*now_mj - *start->second) / 1000.0;
      total_j += *used_j;
    } else {
      all_known = false;
      if (started && now_mj.ok()) {
        energy.problems.push_back("GPU " + std::to_string(gpu) +
                                  ": its energy counter went back (the driver was reloaded): energy unknown");
      }
    }
    energy.gpu_energy_j[gpu] = used_j;
  }
  if (all_known) energy.total_gpu_energy_j = total_j;
  return energy;
}

Result<JobEnergy> NodeAgent::JobEnergySoFar(const std::string& id) {
  MutexLock lock(mu_);
  const NodeJob* job = jobs_.Find(id);
  if (job == nullptr) return Error::NotFound("job " + id + " is not registered");
  return EnergyOf(*job);
}

std::optional<JobTable::CredentialMatch> NodeAgent::JobOfCredential(std::string_view presented) {
  MutexLock lock(mu_);
  return jobs_.FindCredential(presented);
}

std::vector<NodeJob> NodeAgent::Jobs() {
  MutexLock lock(mu_);
  return jobs_.Jobs();
}

Result<LeaseHolder> NodeAgent::ImplicitLeaseHolder(const LeaseHolder& caller, int gpu, uint64_t connection_id) {
  MutexLock lock(mu_);
  if (Status s = CheckGpu(gpu); !s.ok()) return s.error();
  if (caller.kind == LeaseHolder::Kind::kZeusdClient) {
    zeusd_clients_[{caller.zeusd_sub, caller.peer_address}].connections.insert(connection_id);
  }
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
  auto it = zeusd_clients_.find({client.zeusd_sub, client.peer_address});
  if (it == zeusd_clients_.end()) return false;  // it holds nothing
  it->second.connections.insert(connection_id);
  return true;
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

std::vector<std::string> NodeAgent::UndoGpu(int gpu, bool force) {
  std::vector<std::string> problems;
  GpuControl& control = controls_[static_cast<size_t>(gpu)];
  const std::string who = "GPU " + std::to_string(gpu) + ": ";
  control.sm_lock.reset();
  if (force) control.sm_applied_known = false;  // told to NVML again, whatever the agent believes it holds
  if (Status s = ApplySm(gpu); !s.ok()) problems.push_back(who + "cannot undo the SM clock lock: " + s.error().message);
  if (control.memory_lock || force) {
    control.memory_lock.reset();
    if (Status s = backend_->ResetMemoryClocks(gpu); !s.ok()) {
      problems.push_back(who + "cannot reset the memory clocks: " + DeviceError(s.error()).message);
    }
  }
  if (control.power_limit_mw) {
    control.power_limit_mw.reset();
    if (Status s = wattcut::ResetPowerLimit(*backend_, gpu); !s.ok()) {
      problems.push_back(who + "cannot put the power limit back: " + DeviceError(s.error()).message);
    }
  }
  return problems;
}

void NodeAgent::Undo(const EndedLease& ended) {
  for (int gpu : ended.lease.gpus) {
    for (const std::string& problem : UndoGpu(gpu, /*force=*/false)) Log(problem);
  }
}

void NodeAgent::EndLeases(std::vector<EndedLease> ended) {
  if (ended.empty()) return;
  for (const EndedLease& e : ended) {
    Undo(e);
    Log("lease " + std::to_string(e.lease.id) + " of " + e.lease.holder.Description() + " ended (" +
        LeaseEndName(e.reason) + "): its GPUs are back to " +
        (controls_[static_cast<size_t>(e.lease.gpus.front())].ceiling ? "their ceiling" : "their defaults"));
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

Result<GpuControl> NodeAgent::LockClocks(const LeaseHolder& holder, int gpu, ClockKind kind, ClockRange range) {
  MutexLock lock(mu_);
  if (Status s = leases_.CheckHolds(holder, gpu); !s.ok()) return s.error();
  const GpuDescription& d = gpus_[static_cast<size_t>(gpu)];
  const bool sm = kind == ClockKind::kSm;
  const std::vector<int>& supported = sm ? d.sm_clocks_mhz : d.memory_clocks_mhz;
  for (int mhz : {range.min_mhz, range.max_mhz}) {
    if (!Contains(supported, mhz)) {
      return Error::InvalidArgument("GPU " + std::to_string(gpu) + " does not support " + (sm ? "an " : "a ") +
                                    std::string(ClockKindName(kind)) + " clock of " + std::to_string(mhz) +
                                    " MHz (supported: " + wattcut::ClockRangeText(supported) +
                                    (sm ? ", GET /v1/gpus lists them" : "") + ")");
    }
  }
  if (range.min_mhz > range.max_mhz) {
    return Error::InvalidArgument("min_mhz " + std::to_string(range.min_mhz) + " is above max_mhz " +
                                  std::to_string(range.max_mhz));
  }
  Status s = SetClockLock(gpu, kind, range);
  Command("lock_" + std::string(ClockKindId(kind)), s.ok());
  if (!s.ok()) return s.error();
  return ControlOf(gpu);
}

Result<GpuControl> NodeAgent::UnlockClocks(const LeaseHolder& holder, int gpu, ClockKind kind) {
  MutexLock lock(mu_);
  if (Status s = leases_.CheckHolds(holder, gpu); !s.ok()) return s.error();
  Status s = SetClockLock(gpu, kind, std::nullopt);
  Command("unlock_" + std::string(ClockKindId(kind)), s.ok());
  if (!s.ok()) return s.error();
  return ControlOf(gpu);
}

Status NodeAgent::SetClockLock(int gpu, ClockKind kind, std::optional<ClockRange> range) {
  GpuControl& control = controls_[static_cast<size_t>(gpu)];
  if (kind == ClockKind::kSm) {
    // Kept even when applying fails: the next change (or the ceiling's) tries again.
    control.sm_lock = range;
    return ApplySm(gpu);
  }
  Status s = range ? backend_->LockMemoryClocks(gpu, range->min_mhz, range->max_mhz) : backend_->ResetMemoryClocks(gpu);
  if (!s.ok()) return DeviceError(s.error());
  control.memory_lock = range;
  return Status::Ok();
}

Result<GpuControl> NodeAgent::SetPowerLimit(const LeaseHolder& holder, int gpu, double watts) {
  MutexLock lock(mu_);
  if (Status s = leases_.CheckHolds(holder, gpu); !s.ok()) return s.error();
  const GpuDescription& d = gpus_[static_cast<size_t>(gpu)];
  if (!d.power_limits) return Error::InvalidArgument("GPU " + std::to_string(gpu) + " has no settable power limit");
  const int64_t mw = std::llround(watts * 1000.0);
  if (mw < d.power_limits->min_mw || mw > d.power_limits->max_mw) {
    return Error::InvalidArgument("GPU " + std::to_string(gpu) + "'s power limit must be in [" +
                                  std::to_string(d.power_limits->min_mw / 1000) + ", " +
                                  std::to_string(d.power_limits->max_mw / 1000) + "] W");
  }
  Status s = backend_->SetPowerLimitMw(gpu, mw);
  Command("set_power_limit", s.ok());
  if (!s.ok()) return DeviceError(s.error());
  controls_[static_cast<size_t>(gpu)].power_limit_mw = mw;
  SaveState();
  return ControlOf(gpu);
}

Result<GpuControl> NodeAgent::ResetPowerLimit(const LeaseHolder& holder, int gpu) {
  MutexLock lock(mu_);
  if (Status s = leases_.CheckHolds(holder, gpu); !s.ok()) return s.error();
  Status s = wattcut::ResetPowerLimit(*backend_, gpu);
  Command("reset_power_limit", s.ok());
  if (!s.ok()) return DeviceError(s.error());
  controls_[static_cast<size_t>(gpu)].power_limit_mw.reset();
  SaveState();
  return ControlOf(gpu);
}

Result<GpuControl> NodeAgent::SetCeiling(int gpu, int mhz, double lease_s, const std::string& reason) {
  MutexLock lock(mu_);
  if (Status s = CheckGpu(gpu); !s.ok()) return s.error();
  const GpuDescription& d = gpus_[static_cast<size_t>(gpu)];
  const std::optional<int> supported = SupportedClockAtOrBelow(d.sm_clocks_mhz, mhz);
  if (!supported) {
    return Error::InvalidArgument("a ceiling of " + std::to_string(mhz) + " MHz is below GPU " + std::to_string(gpu) +
                                  "'s lowest supported SM clock (" + std::to_string(d.sm_clocks_mhz.back()) + " MHz)");
  }
  GpuControl& control = controls_[static_cast<size_t>(gpu)];
  control.ceiling = Ceiling{*supported, reason, options_.unix_now_s() + lease_s};
  Status s = ApplySm(gpu);
  Command("set_ceiling", s.ok());
  SaveState();
  if (!s.ok()) return s.error();
  return ControlOf(gpu);
}

Result<GpuControl> NodeAgent::ClearCeiling(int gpu) {
  MutexLock lock(mu_);
  if (Status s = CheckGpu(gpu); !s.ok()) return s.error();
  controls_[static_cast<size_t>(gpu)].ceiling.reset();
  Status s = ApplySm(gpu);
  Command("clear_ceiling", s.ok());
  SaveState();
  if (!s.ok()) return s.error();
  return ControlOf(gpu);
}

std::vector<GpuControl> NodeAgent::Controls() {
  MutexLock lock(mu_);
  std::vector<GpuControl> all;
  for (size_t gpu = 0; gpu < controls_.size(); ++gpu) all.push_back(ControlOf(static_cast<int>(gpu)));
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
      auto it = zeusd_clients_.find({holder.zeusd_sub, holder.peer_address});
      return it != zeusd_clients_.end() &&
             (!it->second.connections.empty() || steady_s - it->second.gone_since_s < options_.zeusd_reconnect_grace_s);
    }
    return holder.kind != LeaseHolder::Kind::kProcess || processes_.Alive(holder.pid);
  }));
  // Forget the zeusd clients that hold nothing any more.
  const std::vector<Lease> leases = leases_.Leases();
  for (auto it = zeusd_clients_.begin(); it != zeusd_clients_.end();) {
    bool holds = false;
    for (const Lease& lease : leases) {
      holds = holds || (lease.holder.kind == LeaseHolder::Kind::kZeusdClient &&
                        lease.holder.zeusd_sub == it->first.first && lease.holder.peer_address == it->first.second);
    }
    it = holds || !it->second.connections.empty() ? std::next(it) : zeusd_clients_.erase(it);
  }
  const double now_s = options_.unix_now_s();
  bool lifted = false;
  for (GpuControl& control : controls_) {
    const bool expired = control.ceiling && control.ceiling->expires_at_unix_s <= now_s;
    if (expired) {
      Log("GPU " + std::to_string(control.index) + ": the ceiling of " + std::to_string(control.ceiling->mhz) +
          " MHz ran out its lease");
      control.ceiling.reset();
      lifted = true;
    }
    if (expired) {
      if (Status s = ApplySm(control.index); !s.ok())
        Log("GPU " + std::to_string(control.index) + ": " + s.error().message);
    }
  }
  if (lifted) SaveState();
}

void NodeAgent::ConnectionClosed(uint64_t connection_id) {
  MutexLock lock(mu_);
  EndLeases(leases_.EndConnection(connection_id));
  for (auto& [client, presence] : zeusd_clients_) {
    if (presence.connections.erase(connection_id) > 0 && presence.connections.empty()) {
      presence.gone_since_s = options_.steady_now_s();  // Reap ends its leases after the grace
    }
  }
}

void NodeAgent::SaveState() {
  if (options_.state_dir.empty()) return;
  AgentStateFile state;
  for (const GpuControl& control : controls_) {
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
