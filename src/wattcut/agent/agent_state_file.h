// What the agent must remember across its own restarts (--state-dir DIR, file DIR/agent-state.json):
// the ceilings in force, with the wall-clock time their lease runs out, and the GPUs whose power
// limit it changed (put back to the default at start-up), and the batch jobs registered on the node
// (job_table.h: a job, and its credential, outlive a restart of the agent). Leases are not kept:
// their holders take new ones. The file is the agent's own (mode 0600): it holds the jobs'
// credentials. Written whole to a temporary file, fsynced and renamed, so a crash leaves the old
// or the new file, never half of one; a file that cannot be read is kept aside as
// agent-state.json.corrupt-<time> (never deleted) and the agent starts without it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/agent/job_table.h"
#include "wattcut/base/result.h"

namespace wattcut::agent {

struct StoredCeiling {
  int gpu = 0;
  int mhz = 0;
  std::string reason;
  double expires_at_unix_s = 0;
};

struct AgentStateFile {
  std::vector<StoredCeiling> ceilings;
  std::vector<int> power_limit_changed_gpus;
  std::vector<NodeJob> jobs;  // absent in files written before jobs existed: none
};

// The file in `state_dir`.
std::string AgentStatePath(const std::string& state_dir);

// The state stored in `state_dir` (empty when there is no file yet). A file that does not parse is
// renamed aside and reported in `warning`; only an unreadable folder is an error.
Result<AgentStateFile> LoadAgentState(const std::string& state_dir, std::string& warning);
Status SaveAgentState(const std::string& state_dir, const AgentStateFile& state);

}  // namespace wattcut::agent
