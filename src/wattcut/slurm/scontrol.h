// Slurm's commands the plugin runs as root (scontrol; sacct and sacctmgr beside it) to write a
// job's AdminComment: bounded in time, their output captured, never through a shell.
#pragma once

#include <string>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::slurm {

// Runs `command ARGS...`; its standard output (what it writes on stderr is never part of it), or
// an error with its exit status and what it said (its stderr, else its output; kUnavailable when
// it cannot run or did not end within `timeout_s`: it is then killed).
Result<std::string> RunSlurmCommand(const std::string& command, const std::vector<std::string>& args,
                                    double timeout_s = 10);

// Puts `entry` of `node` into job `job_id`'s AdminComment (admin_comment.h), keeping the rest.
//  * While the job is not finished: read with `scontrol show job -o`, written with `scontrol update`.
//  * Once it finished (the epilog runs then), slurmctld refuses the update ("Job has already
//    finished"): the job's record in accounting is read with `sacct` and written with `sacctmgr`
//    (both in scontrol's folder), which works where the cluster keeps accounting (slurmdbd).
// Two nodes' epilogs writing at the same moment may lose one of the two entries (neither command
// can append); the agents' logs and the planning server keep every node's.
Status RecordAdminComment(const std::string& scontrol, const std::string& job_id, const std::string& node,
                          const std::string& entry);

}  // namespace wattcut::slurm
