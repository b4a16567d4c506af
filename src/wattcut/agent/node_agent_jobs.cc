// The node agent's batch jobs (node_agent.h, job_table.h): who may lease which GPUs under a job's
// credential, a job registered and ended (its GPUs reset, its energy told), its energy so far.
#include <algorithm>

#include "wattcut/agent/node_agent.h"
#include "wattcut/base/index_ranges.h"

namespace wattcut::agent {

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
    if (std::ranges::count(job->gpus, gpu) == 0) {
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
    for (const GpuOwner& owner : owners_) job.gpus.push_back(owner.index());
  }
  if (known == nullptr) {
    auto credential = NewJobCredential();
    if (!credential.ok()) return credential.error();
    job.credential = std::move(*credential);
    job.started_at_unix_s = options_.unix_now_s();
  }
  std::vector<int> new_gpus;
  for (int gpu : job.gpus) {
    if (known == nullptr || std::ranges::count(known->gpus, gpu) == 0) new_gpus.push_back(gpu);
  }
  job.energy_at_start_mj = ReadEnergyCounters(*backend_, new_gpus);
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
  std::vector<EndedLease> leases = leases_.EndJob(id);
  end.leases_ended = static_cast<int>(leases.size());
  EndLeases(std::move(leases));
  // The reset's problems first; the energy's come after.
  const std::vector<std::string> problems =
      end.job.touched ? ResetJobGpus(end.job, end.reset_gpus) : std::vector<std::string>{};
  static_cast<JobEnergy&>(end) = MeasureJobEnergy(end.job, *backend_, options_.unix_now_s());
  end.problems.insert(end.problems.begin(), problems.begin(), problems.end());
  SaveState();
  Log("job " + id + " of uid " + std::to_string(end.job.uid) + " ended after " +
      std::to_string(static_cast<int64_t>(end.duration_s)) + " s: " + JobEnergyText(end) + "; " +
      std::to_string(end.leases_ended) + " leases ended; " +
      (end.job.touched ? "GPUs " + IndexRangesText(end.reset_gpus) + " reset" : std::string("its GPUs were not used")));
  for (const std::string& problem : end.problems) Log("job " + id + ": " + problem);
  return end;
}

std::vector<std::string> NodeAgent::ResetJobGpus(const NodeJob& job, std::vector<int>& reset_gpus) {
  // Whatever the job left, even where its leases ended before (its processes were killed): the
  // GPUs go back to their defaults, or to the row's ceiling.
  std::vector<std::string> problems;
  for (int gpu : job.gpus) {
    if (const Lease* lease = leases_.LeaseOf(gpu)) {
      problems.push_back("GPU " + std::to_string(gpu) + ": not reset: leased by " + lease->holder.Description() +
                         " since");
      continue;
    }
    const std::vector<std::string> undone = Owner(gpu).UndoHolder(*backend_, /*force=*/true);
    if (undone.empty()) reset_gpus.push_back(gpu);
    problems.insert(problems.end(), undone.begin(), undone.end());
  }
  return problems;
}

Result<JobEnergy> NodeAgent::JobEnergySoFar(const std::string& id) {
  MutexLock lock(mu_);
  const NodeJob* job = jobs_.Find(id);
  if (job == nullptr) return Error::NotFound("job " + id + " is not registered");
  return MeasureJobEnergy(*job, *backend_, options_.unix_now_s());
}

std::optional<JobTable::CredentialMatch> NodeAgent::JobOfCredential(std::string_view presented) {
  MutexLock lock(mu_);
  return jobs_.FindCredential(presented);
}

std::vector<NodeJob> NodeAgent::Jobs() {
  MutexLock lock(mu_);
  return jobs_.Jobs();
}

}  // namespace wattcut::agent
