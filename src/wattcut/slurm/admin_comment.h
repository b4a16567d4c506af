// A job's GPU energy as an administrator reads it in the job's AdminComment (`scontrol show job`,
// sacct's AdminComment field): one entry per node, written by that node's epilog,
//
//   wattcut[node01]: GPUs 0-7 used 12345.6 J in 34 s
//
// entries separated by "; ". Pure text rules; scontrol.h runs scontrol.
#pragma once

#include <string>

#include "wattcut/slurm/agent_jobs.h"

namespace wattcut::slurm {

// This node's entry for the job's end the agent reported.
std::string JobEnergyEntry(const std::string& node, const AgentJobEnd& end);

// The AdminComment with `entry` of `node`: any earlier entry of the same node (an epilog run
// twice) is replaced; other nodes' entries and any other text are kept, in order.
std::string MergeAdminComment(const std::string& existing, const std::string& node, const std::string& entry);

// The AdminComment in the one-line output of `scontrol show job -o ID` ("" when the job has
// none): the text after "AdminComment=" up to the next " Key=" field.
std::string AdminCommentOf(const std::string& show_job_line);

}  // namespace wattcut::slurm
