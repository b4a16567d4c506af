// The wattcut SPANK plugin: `--wattcut=MODE` and `--wattcut-server=URL` for sbatch, srun and
// salloc, checked where they are given (a bad value stops the submission with the plugin's
// message), and each task's environment (task_environment.h) set before it runs. Enabled by one
// line in plugstack.conf (plugin_config.h). docs/slurm.md.
//
// Nothing here may take slurmstepd down: every entry point catches what the C++ below could
// throw and answers Slurm with an error code or a log line instead.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/slurm/plugin_config.h"
#include "wattcut/slurm/task_environment.h"
#include "wattcut/slurm/wattcut_mode.h"

// spank.h declares its entry points without extern "C" for C++.
extern "C" {
#include <slurm/spank.h>

// SPANK_PLUGIN(wattcut, 1), with the external linkage C gives these consts and C++ does not
// without `extern`: Slurm's loader looks them up by name.
extern const char plugin_name[] = "wattcut";
extern const char plugin_type[] = "spank";
extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
extern const unsigned int spank_plugin_version = 1;
}

namespace {

using wattcut::slurm::ParsePluginConfig;
using wattcut::slurm::ParseWattcutMode;
using wattcut::slurm::PluginConfig;
using wattcut::slurm::TaskEnvironmentFor;
using wattcut::slurm::WattcutMode;

// The job's choices (one plugin instance per process: srun, sbatch, salloc or slurmstepd).
std::optional<WattcutMode> g_mode;
std::string g_server_url;
PluginConfig g_config;

int OnWattcut(int /*val*/, const char* optarg, int /*remote*/) {
  try {
    auto mode = ParseWattcutMode(optarg ? optarg : "");
    if (!mode) {
      slurm_error("wattcut: %s", mode.error().message.c_str());
      return -1;
    }
    g_mode = *mode;
    return 0;
  } catch (const std::exception& e) {
    slurm_error("wattcut: --wattcut: %s", e.what());
    return -1;
  }
}

int OnWattcutServer(int /*val*/, const char* optarg, int /*remote*/) {
  try {
    const std::string url = optarg ? optarg : "";
    if (auto s = wattcut::slurm::CheckServerUrl(url, "--wattcut-server"); !s) {
      slurm_error("wattcut: %s", s.error().message.c_str());
      return -1;
    }
    g_server_url = url;
    return 0;
  } catch (const std::exception& e) {
    slurm_error("wattcut: --wattcut-server: %s", e.what());
    return -1;
  }
}

struct spank_option g_options[] = {
    {const_cast<char*>("wattcut"), const_cast<char*>("MODE"),
     const_cast<char*>("wattcut's GPU frequency plan for this job: off, fastest, least-energy or power:WATTS "
                       "(per GPU); default: the cluster's (docs/slurm.md)"),
     1, 0, OnWattcut},
    {const_cast<char*>("wattcut-server"), const_cast<char*>("URL"),
     const_cast<char*>("the wattcut planning server this job's ranks use (default: the cluster's)"), 1, 0,
     OnWattcutServer},
    SPANK_OPTIONS_TABLE_END};

}  // namespace

extern "C" int slurm_spank_init(spank_t spank, int ac, char** av) {
  try {
    std::vector<std::string> words(av, av + ac);
    auto config = ParsePluginConfig(words);
    if (!config) {
      slurm_error("wattcut: plugstack.conf: %s", config.error().message.c_str());
      // Refused loudly where that stops nothing half-way (slurmd at its start, srun, sbatch,
      // salloc); inside slurmstepd a failed init would drain the node, so there the job runs
      // unmanaged (the defaults: off, no server).
      if (!spank_remote(spank)) return -1;
    } else {
      g_config = *config;
    }
    for (struct spank_option& option : g_options) {
      if (option.name == nullptr) break;
      if (spank_option_register(spank, &option) != ESPANK_SUCCESS) {
        slurm_error("wattcut: cannot register the option --%s", option.name);
        return -1;
      }
    }
    return 0;
  } catch (const std::exception& e) {
    slurm_error("wattcut: %s", e.what());
    return -1;
  }
}

// After the options are read, in srun, sbatch and salloc (local and allocator contexts): a job
// with both wattcut and --gpu-freq in force is refused at submission, saying why. (`sbatch
// --gpu-freq` on the command line is not visible here in Slurm 22.05: the batch script's first
// line says why, and each srun in it, which sees SLURM_GPU_FREQ, is refused. A refusal in
// slurmstepd is never made: Slurm drains the node and reports the job completed.)
extern "C" int slurm_spank_init_post_opt(spank_t spank, int /*ac*/, char** /*av*/) {
  try {
    if (spank_remote(spank)) return 0;  // a refusal in slurmstepd would end the job silently
    auto variable = [](const std::string& name) -> std::optional<std::string> {
      const char* value = std::getenv(name.c_str());
      return value ? std::optional<std::string>(value) : std::nullopt;
    };
    if (auto conflict = wattcut::slurm::GpuFreqConflict(g_config, g_mode, variable)) {
      slurm_error("wattcut: %s", conflict->c_str());
      return -1;
    }
    return 0;
  } catch (const std::exception& e) {
    slurm_error("wattcut: %s", e.what());
    return 0;
  }
}

// In each task, after the fork and before the exec (slurmstepd, remote context).
extern "C" int slurm_spank_task_init(spank_t spank, int /*ac*/, char** /*av*/) {
  try {
    if (!spank_remote(spank)) return 0;
    auto variable = [spank](const std::string& name) -> std::optional<std::string> {
      char value[4096];
      if (spank_getenv(spank, name.c_str(), value, sizeof(value)) != ESPANK_SUCCESS) return std::nullopt;
      return std::string(value);
    };
    const auto environment = TaskEnvironmentFor(g_config, g_mode, g_server_url, variable);
    const bool first_task = variable("SLURM_PROCID").value_or("0") == "0";
    if (first_task && environment.warning.empty()) {
      if (auto conflict = wattcut::slurm::GpuFreqConflict(g_config, g_mode, variable)) {
        std::fprintf(stderr, "wattcut: %s\n", conflict->c_str());
      }
    }
    if (!environment.warning.empty()) {
      // One line for the job, from its first task.
      if (variable("SLURM_PROCID").value_or("0") == "0")
        std::fprintf(stderr, "wattcut: %s\n", environment.warning.c_str());
      return 0;
    }
    for (const auto& [name, value] : environment.set) {
      if (spank_setenv(spank, name.c_str(), value.c_str(), 1) != ESPANK_SUCCESS) {
        slurm_error("wattcut: cannot set %s in the task's environment", name.c_str());
      }
    }
    return 0;
  } catch (const std::exception& e) {
    // The task runs unmanaged rather than not at all.
    slurm_error("wattcut: %s", e.what());
    return 0;
  }
}
