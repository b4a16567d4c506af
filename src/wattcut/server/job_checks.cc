#include "wattcut/server/job_checks.h"

#include <set>
#include <string>

#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/plan/planning_limits.h"

namespace wattcut::server {

namespace {

// "rank 5 is out of range [0, 2)", the way every check says it.
std::string OutOfRange(const char* name, int64_t value, int limit) {
  return std::string(name) + " " + std::to_string(value) + " is out of range [0, " + std::to_string(limit) + ")";
}

}  // namespace

Result<const RankInfo*> RegisteredRank(const JobInfo& info, const std::vector<std::optional<RankInfo>>& ranks,
                                       int64_t rank) {
  const std::string prefix = "job '" + info.job_id + "': ";
  if (rank < 0 || rank >= info.world_size) return Error{prefix + OutOfRange("rank", rank, info.world_size)};
  const auto& registered = ranks[static_cast<size_t>(rank)];
  if (!registered) {
    return Error::Conflict(prefix + "rank " + std::to_string(rank) + " has not registered; POST /register_rank/" +
                           info.job_id + " first");
  }
  return &*registered;
}

Status CheckNewRank(const JobInfo& info, const std::vector<std::optional<RankInfo>>& ranks, const RankInfo& rank) {
  const struct {
    const char* name;
    int value;
    int limit;
  } fields[] = {{"rank", rank.rank, info.world_size},
                {"dp_rank", rank.dp_rank, info.dp_degree},
                {"pp_rank", rank.pp_rank, info.pp_degree},
                {"tp_rank", rank.tp_rank, info.tp_degree}};
  for (const auto& f : fields) {
    if (f.value < 0 || f.value >= f.limit) return Error{OutOfRange(f.name, f.value, f.limit)};
  }
  if (ranks[static_cast<size_t>(rank.rank)]) {
    return Error::Conflict("rank " + std::to_string(rank.rank) + " is already registered");
  }
  for (const auto& other : ranks) {
    if (other && other->dp_rank == rank.dp_rank && other->pp_rank == rank.pp_rank && other->tp_rank == rank.tp_rank) {
      return Error::Conflict("(dp_rank, pp_rank, tp_rank) = (" + std::to_string(rank.dp_rank) + ", " +
                             std::to_string(rank.pp_rank) + ", " + std::to_string(rank.tp_rank) +
                             ") is already registered by rank " + std::to_string(other->rank));
    }
  }
  return Status::Ok();
}

Status CheckDpRank(const JobInfo& info, int64_t dp_rank) {
  if (dp_rank < 0 || dp_rank >= info.dp_degree) return Error{OutOfRange("dp_rank", dp_rank, info.dp_degree)};
  return Status::Ok();
}

Status CheckRankProfile(const RankInfo& registered, const RankProfile& profile) {
  const std::string rank = "rank " + std::to_string(profile.rank) + ": ";
  if (registered.dp_rank != profile.dp_rank || registered.pp_rank != profile.pp_rank ||
      registered.tp_rank != profile.tp_rank) {
    return Error{rank + "dp/pp/tp ranks differ from the ones it registered with"};
  }
  std::set<int> declared(registered.available_frequencies.begin(), registered.available_frequencies.end());
  for (const auto* measured : {&profile.forward_time, &profile.backward_time}) {
    for (const auto& [freq_mhz, value] : *measured) {
      if (!declared.count(freq_mhz)) {
        return Error{rank + "frequency " + std::to_string(freq_mhz) + " MHz is not one the rank declared"};
      }
    }
  }
  return Status::Ok();
}

Status CheckPipelineLimits(const JobInfo& info, const PlannerSettings& planner) {
  if (planner.num_microbatches < 1) return Status::Ok();
  if (auto s = CheckPipelineShape(info.pp_degree * planner.virtual_stages, planner.num_microbatches); !s) {
    return Error{"planner settings beyond the planner's limits: " + s.error().message};
  }
  if (auto s = CheckScheduleShape(planner.schedule, info.pp_degree, planner.num_microbatches, planner.virtual_stages);
      !s) {
    return Error{"planner settings: " + s.error().message};
  }
  return Status::Ok();
}

}  // namespace wattcut::server
