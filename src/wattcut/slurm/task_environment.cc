#include "wattcut/slurm/task_environment.h"

#include <charconv>

#include "wattcut/base/index_ranges.h"

namespace wattcut::slurm {

namespace {

// The launcher's variable where it set one, else Slurm's.
std::string Either(const TaskVariable& variable, const char* launcher, const char* slurm) {
  if (auto v = variable(launcher); v && !v->empty()) return *v;
  return variable(slurm).value_or("");
}

// The NVML index of the task's GPU: the local rank's entry in the GPUs Slurm gave the step (or the
// job) on this node, where gres lists them; else the local rank itself (the node's GPUs in order).
std::string TaskGpu(const TaskVariable& variable, const std::string& local_rank) {
  int local = -1;
  auto [end, ec] = std::from_chars(local_rank.data(), local_rank.data() + local_rank.size(), local);
  if (ec != std::errc() || end != local_rank.data() + local_rank.size() || local < 0) return local_rank;
  for (const char* name : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"}) {
    const std::optional<std::string> text = variable(name);
    if (!text || text->empty()) continue;
    auto gpus = ParseIndexRanges(*text, 4095, name);
    if (gpus.ok() && static_cast<size_t>(local) < gpus->size()) return std::to_string((*gpus)[local]);
  }
  return local_rank;
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
  out.set.insert(out.set.begin() + 6, {"WATTCUT_GPU", TaskGpu(variable, out.set[5].second)});
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
