// The batch jobs that hold GPUs of this node (the Slurm plugin registers each one, docs/slurm.md),
// as pure state: each job's owner (a uid), its GPUs, and the credential its tasks present to the
// agent (`Authorization: Bearer <credential>` on the Unix socket). A credential is good only for
// its job's owner, on its job's GPUs, and only while the job is registered: ending the job (its
// epilog) ends it. The node agent (node_agent.h) owns one table, checks leases against it and
// stores it with its state, so that a job outlives a restart of the agent.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wattcut/agent/agent_requests.h"
#include "wattcut/base/result.h"

namespace wattcut::agent {

struct NodeJob {
  std::string id;         // the batch system's job id ("4242"): 1 to 64 of [A-Za-z0-9._-]
  int uid = -1;           // the job's owner
  std::vector<int> gpus;  // sorted, distinct
  std::string credential;
  double started_at_unix_s = 0;
  // Each GPU's energy counter when the job was registered (nullopt: the GPU has none, or it
  // could not be read then), by GPU index.
  std::map<int, std::optional<int64_t>> energy_at_start_mj;
  // A lease was taken under the job's credential: its GPUs are reset when it ends.
  bool touched = false;
};

// A new job's credential: 32 random bytes as 64 hex characters.
Result<std::string> NewJobCredential();

class JobTable {
 public:
  // Credentials of ended jobs are remembered (not stored) so that a late caller learns why it is
  // refused; this many, the oldest forgotten first.
  static constexpr size_t kRememberedEndedJobs = 256;

  // Registers `job` (its credential, start time and counters filled in by the caller). A job
  // already registered keeps its credential and start; its GPUs become the union of both (a later
  // step of the job may use more of the job's GPUs); kConflict when the owner differs.
  // Returns the job as registered and whether it was new.
  struct Registered {
    NodeJob job;
    bool created = false;
  };
  Result<Registered> Register(NodeJob job);

  const NodeJob* Find(std::string_view id) const;
  // The job whose credential `presented` is, compared in constant time against every credential
  // (registered and remembered ended ones). `ended`: the job has ended.
  struct CredentialMatch {
    std::string job_id;
    bool ended = false;
  };
  std::optional<CredentialMatch> FindCredential(std::string_view presented) const;

  void MarkTouched(std::string_view id);
  // Removes job `id` (kNotFound when it is not registered) and remembers its credential as ended.
  Result<NodeJob> End(std::string_view id);

  std::vector<NodeJob> Jobs() const;
  // Puts back jobs stored before a restart (no checks beyond the id's; the file is the agent's own).
  void Restore(std::vector<NodeJob> jobs);

 private:
  std::map<std::string, NodeJob, std::less<>> jobs_;
  std::deque<std::pair<std::string, std::string>> ended_;  // (credential, job id)
};

}  // namespace wattcut::agent
