#include "wattcut/slurm/task_environment.h"

namespace wattcut::slurm {

namespace {

// The launcher's variable where it set one, else Slurm's.
std::string Either(const TaskVariable& variable, const char* launcher, const char* slurm) {
  if (auto v = variable(launcher); v && !v->empty()) return *v;
  return variable(slurm).value_or("");
}

}  // namespace

TaskEnvironment TaskEnvironmentFor(const PluginConfig& config, const std::optional<WattcutMode>& mode,
                                   const std::string& server_url, const TaskVariable& variable) {
  TaskEnvironment out;
  const WattcutMode chosen = mode.value_or(config.default_mode);
  if (chosen.kind == WattcutMode::Kind::kOff) return out;
  const std::string server = server_url.empty() ? config.server_url : server_url;
  if (server.empty()) {
    out.warning = "--wattcut=" + chosen.Text() +
                  " but no planning server is known (neither --wattcut-server nor the plugin's server=): the job "
                  "runs unmanaged";
    return out;
  }
  out.set = {{"WATTCUT_MODE", chosen.Text()},
             {"WATTCUT_SERVER_URL", server},
             {"WATTCUT_JOB_NAME", "slurm-" + variable("SLURM_JOB_ID").value_or("unknown")},
             {"WATTCUT_RANK", Either(variable, "RANK", "SLURM_PROCID")},
             {"WATTCUT_WORLD_SIZE", Either(variable, "WORLD_SIZE", "SLURM_NTASKS")},
             {"WATTCUT_LOCAL_RANK", Either(variable, "LOCAL_RANK", "SLURM_LOCALID")},
             {"WATTCUT_AGENT_SOCKET", config.agent_socket}};
  return out;
}

std::optional<std::string> GpuFreqConflict(const PluginConfig& config, const std::optional<WattcutMode>& mode,
                                           const TaskVariable& variable) {
  const WattcutMode chosen = mode.value_or(config.default_mode);
  if (chosen.kind == WattcutMode::Kind::kOff) return std::nullopt;
  for (const char* name : {"SLURM_GPU_FREQ", "SBATCH_GPU_FREQ", "SALLOC_GPU_FREQ"}) {
    const std::optional<std::string> freq = variable(name);
    if (!freq || freq->empty()) continue;
    return "--wattcut=" + chosen.Text() + " and --gpu-freq=" + *freq +
           " together: --gpu-freq holds every GPU of the job at one clock, wattcut changes each GPU's clock "
           "computation by computation; give one of them (--wattcut=off keeps --gpu-freq)";
  }
  return std::nullopt;
}

}  // namespace wattcut::slurm
