// The environment a Slurm task gets from the wattcut plugin, from the job's choice, the plugin's
// config and the task's own Slurm variables (pure: spank_plugin.cc reads and sets it):
//
//   WATTCUT_MODE          off is never set: a job with --wattcut=off gets nothing at all
//   WATTCUT_SERVER_URL    --wattcut-server, else the plugin's server=
//   WATTCUT_JOB_NAME      slurm-JOBID: the planning job's name (its id is the server's)
//   WATTCUT_RANK, WATTCUT_WORLD_SIZE, WATTCUT_LOCAL_RANK
//                         the launcher's RANK, WORLD_SIZE, LOCAL_RANK where it sets them
//                         (torchrun), else Slurm's SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID
//   WATTCUT_GPU           the task's GPU as NVML and the agent number it: the local rank's entry
//                         in SLURM_STEP_GPUS or SLURM_JOB_GPUS (gres), else the local rank
//   WATTCUT_AGENT_SOCKET  the node agent's socket
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wattcut/slurm/plugin_config.h"
#include "wattcut/slurm/wattcut_mode.h"

namespace wattcut::slurm {

// A variable of the task's environment, or nullopt when it is not set.
using TaskVariable = std::function<std::optional<std::string>(const std::string& name)>;

struct TaskEnvironment {
  std::vector<std::pair<std::string, std::string>> set;  // empty: the job is left untouched
  // Why the job runs unmanaged although it asked for wattcut (no server known); empty otherwise.
  std::string warning;
};

// `mode`: the job's --wattcut, or nullopt for the plugin's default; `server_url`: its
// --wattcut-server, or empty.
TaskEnvironment TaskEnvironmentFor(const PluginConfig& config, const std::optional<WattcutMode>& mode,
                                   const std::string& server_url, const TaskVariable& variable);

// Why a job cannot have both wattcut and Slurm's uniform --gpu-freq (docs/slurm.md): nullopt when
// the job's mode is off or no --gpu-freq is in force (SLURM_GPU_FREQ, or sbatch's and salloc's
// SBATCH_GPU_FREQ / SALLOC_GPU_FREQ), else the message the plugin refuses the job with.
std::optional<std::string> GpuFreqConflict(const PluginConfig& config, const std::optional<WattcutMode>& mode,
                                           const TaskVariable& variable);

}  // namespace wattcut::slurm
