// The wattcut SPANK plugin: `--wattcut=MODE` and `--wattcut-server=URL` for sbatch, srun and
// salloc, checked where they are given (a bad value stops the submission with the plugin's
// message); the job registered at the node agent (its prolog, and each task as root), each
// task's environment (task_environment.h) and the job's agent credential set before it runs; and
// at the job's end (its epilog) the job ended at the agent, which resets its GPUs, and its GPU
// energy recorded (AdminComment, slurmd's log, the planning server). Enabled by one line in
// plugstack.conf (plugin_config.h). docs/slurm.md.
//
// Nothing here may take slurmstepd down: every entry point catches what the C++ below could
// throw and answers Slurm with an error code or a log line instead.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/index_ranges.h"
#include "wattcut/http/token_file.h"
#include "wattcut/slurm/admin_comment.h"
#include "wattcut/slurm/agent_jobs.h"
#include "wattcut/slurm/plugin_config.h"
#include "wattcut/slurm/scontrol.h"
#include "wattcut/slurm/server_energy_report.h"
#include "wattcut/slurm/task_environment.h"
#include "wattcut/slurm/wattcut_mode.h"

// spank.h declares its entry points without extern "C" for C++.
extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>

// SPANK_PLUGIN(wattcut, 1), with the external linkage C gives these consts and C++ does not
// without `extern`: Slurm's loader looks them up by name.
extern const char plugin_name[] = "wattcut";
extern const char plugin_type[] = "spank";
extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
extern const unsigned int spank_plugin_version = 1;
}

namespace {

using wattcut::Status;
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

// A variable of this process's environment (srun's, sbatch's; the prolog's and the epilog's are the job's).
std::optional<std::string> Environment(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  return value ? std::optional<std::string>(value) : std::nullopt;
}

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
    if (auto conflict = wattcut::slurm::GpuFreqConflict(g_config, g_mode, Environment)) {
      slurm_error("wattcut: %s", conflict->c_str());
      return -1;
    }
    return 0;
  } catch (const std::exception& e) {
    slurm_error("wattcut: %s", e.what());
    return 0;
  }
}

namespace {

// The GPUs Slurm gave the job on this node, from the job's or the step's variables; nullopt where
// Slurm allocates no GPUs (no gres): the agent then gives a new job every GPU of the node.
std::optional<std::vector<int>> JobGpus(const wattcut::slurm::TaskVariable& variable) {
  for (const char* name : {"SLURM_JOB_GPUS", "SLURM_STEP_GPUS"}) {
    if (auto text = variable(name); text && !text->empty()) {
      auto gpus = wattcut::ParseIndexRanges(*text, 4095, std::string("$") + name);
      if (gpus.ok()) return *gpus;
      slurm_error("wattcut: %s", gpus.error().message.c_str());
      return std::vector<int>{};  // unreadable: no GPU rather than every GPU
    }
  }
  return std::nullopt;
}

// Whether this task speaks for the job, so that a warning is one line per job: the first task of
// the batch script in a batch job (whose srun steps say nothing), of the step otherwise.
bool SpeaksForJob(spank_t spank, const wattcut::slurm::TaskVariable& variable) {
  if (variable("SLURM_PROCID").value_or("0") != "0") return false;
  uint32_t step = 0;
  if (spank_get_item(spank, S_JOB_STEPID, &step) == ESPANK_SUCCESS && step == SLURM_BATCH_SCRIPT) return true;
  return variable("ENVIRONMENT").value_or("") != "BATCH";
}

// The plugstack.conf words as the prolog and the epilog get them: slurmd runs them without
// slurm_spank_init, so each reads its config from its own arguments.
std::optional<PluginConfig> JobScriptConfig(int ac, char** av, const char* what) {
  auto config = ParsePluginConfig(std::vector<std::string>(av, av + ac));
  if (!config) {
    slurm_error("wattcut: %s: plugstack.conf: %s", what, config.error().message.c_str());
    return std::nullopt;
  }
  return *config;
}

// This node's name as Slurm knows it, else the host's.
std::string NodeName(const wattcut::slurm::TaskVariable& variable) {
  std::string node = variable("SLURMD_NODENAME").value_or("");
  char host[256] = {0};
  if (node.empty() && ::gethostname(host, sizeof(host) - 1) == 0) node = host;
  return node;
}

// A task's variable, as slurmstepd has it for the task.
wattcut::slurm::TaskVariable TaskVariables(spank_t spank) {
  return [spank](const std::string& name) -> std::optional<std::string> {
    char value[4096];
    if (spank_getenv(spank, name.c_str(), value, sizeof(value)) != ESPANK_SUCCESS) return std::nullopt;
    return std::string(value);
  };
}

// What the privileged half of a task's start found at the agent, for the unprivileged half (the same
// forked process): the job's credential, or why there is none.
std::optional<std::string> g_credential;
std::string g_agent_problem;

}  // namespace

// In each task, after the fork and before it drops root (slurmstepd, remote context): a job that asks
// for wattcut is registered at the agent (again: the prolog did so when it could) and its credential
// kept for slurm_spank_task_init. The task's rank is not in its environment yet.
extern "C" int slurm_spank_task_init_privileged(spank_t spank, int /*ac*/, char** /*av*/) {
  try {
    if (!spank_remote(spank)) return 0;
    const auto variable = TaskVariables(spank);
    const auto environment = TaskEnvironmentFor(g_config, g_mode, g_server_url, variable);
    if (environment.set.empty()) return 0;  // off, or no server: nothing to ask the agent
    uint32_t job_id = 0;
    uid_t uid = 0;
    if (spank_get_item(spank, S_JOB_ID, &job_id) != ESPANK_SUCCESS ||
        spank_get_item(spank, S_JOB_UID, &uid) != ESPANK_SUCCESS) {
      g_agent_problem = "cannot read the job's id and user";
      return 0;
    }
    auto credential = wattcut::slurm::RegisterJobAtAgent(g_config.agent_socket, std::to_string(job_id),
                                                         static_cast<int>(uid), JobGpus(variable));
    if (credential.ok()) {
      g_credential = credential->credential;
    } else {
      g_agent_problem = credential.error().message;
    }
    return 0;
  } catch (const std::exception& e) {
    g_agent_problem = e.what();
    return 0;
  }
}

// In each task, after it dropped root and before the exec (slurmstepd, remote context): the task's
// environment and the job's credential set. The agent unreachable at the job's start: the job runs
// unmanaged, one line says so.
extern "C" int slurm_spank_task_init(spank_t spank, int /*ac*/, char** /*av*/) {
  try {
    if (!spank_remote(spank)) return 0;
    const auto variable = TaskVariables(spank);
    const bool speaks = SpeaksForJob(spank, variable);
    auto environment = TaskEnvironmentFor(g_config, g_mode, g_server_url, variable);
    if (speaks && environment.warning.empty()) {
      if (auto conflict = wattcut::slurm::GpuFreqConflict(g_config, g_mode, variable)) {
        std::fprintf(stderr, "wattcut: %s\n", conflict->c_str());
      }
    }
    if (!environment.warning.empty()) {
      if (speaks) std::fprintf(stderr, "wattcut: %s\n", environment.warning.c_str());  // one line per job
      return 0;
    }
    if (environment.set.empty()) return 0;  // off: the job is left untouched
    if (!g_credential) {
      if (speaks) std::fprintf(stderr, "wattcut: %s: the job runs unmanaged\n", g_agent_problem.c_str());
      return 0;
    }
    environment.set.emplace_back("WATTCUT_AGENT_TOKEN", *g_credential);
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

// Once per job on each node before its first step (slurmd's prolog, as root): the job registered at
// the agent with the GPUs Slurm gave it, so that its GPU energy is measured from its start. Never
// fails: a failing prolog would drain the node.
extern "C" int slurm_spank_job_prolog(spank_t /*spank*/, int ac, char** av) {
  try {
    const std::optional<PluginConfig> config = JobScriptConfig(ac, av, "prolog");
    if (!config) return 0;
    const std::string job_id = Environment("SLURM_JOB_ID").value_or("");
    const std::string uid = Environment("SLURM_JOB_UID").value_or("");
    if (job_id.empty() || uid.empty()) return 0;
    auto registered =
        wattcut::slurm::RegisterJobAtAgent(config->agent_socket, job_id, std::stoi(uid), JobGpus(Environment));
    if (!registered.ok()) slurm_info("wattcut: %s", registered.error().message.c_str());
    return 0;
  } catch (const std::exception& e) {
    slurm_error("wattcut: prolog: %s", e.what());
    return 0;
  }
}

// Once per job on each node at its end, however it ended (slurmd's epilog, as root): the agent ends
// the job's leases, resets the GPUs it used and tells their energy, which goes to the job's
// AdminComment, slurmd's log and the planning server. Never fails (a failing epilog drains the
// node): what cannot be done is logged.
extern "C" int slurm_spank_job_epilog(spank_t spank, int ac, char** av) {
  try {
    const std::optional<PluginConfig> config = JobScriptConfig(ac, av, "epilog");
    if (!config) return 0;
    const std::string job_id = Environment("SLURM_JOB_ID").value_or("");
    if (job_id.empty()) return 0;
    auto end = wattcut::slurm::EndJobAtAgent(config->agent_socket, job_id);
    if (!end.ok()) {
      if (end.error().code == wattcut::ErrorCode::kNotFound) {
        slurm_info("wattcut: job %s: the agent did not know the job (it was down when the job started)",
                   job_id.c_str());
      } else {
        slurm_error("wattcut: job %s: %s", job_id.c_str(), end.error().message.c_str());
      }
      return 0;
    }
    const std::string node = NodeName(Environment);
    const std::string entry = wattcut::slurm::JobEnergyEntry(node, *end);
    slurm_info("wattcut: job %s: %s", job_id.c_str(), entry.c_str());
    for (const std::string& problem : end->problems)
      slurm_error("wattcut: job %s: %s", job_id.c_str(), problem.c_str());
    if (Status s = wattcut::slurm::RecordAdminComment(config->scontrol, job_id, node, entry); !s.ok()) {
      // Without accounting a finished job's AdminComment cannot change: it keeps what the batch
      // script's end wrote (slurm_spank_exit).
      slurm_info("wattcut: job %s: AdminComment not written: %s", job_id.c_str(), s.error().message.c_str());
    }
    // The job's own --wattcut-server where Slurm passes the job's options to the epilog, else the
    // cluster's.
    std::string server = config->server_url;
    char* job_server = nullptr;
    if (spank_option_getopt(spank, &g_options[1], &job_server) == ESPANK_SUCCESS && job_server != nullptr &&
        *job_server != 0) {
      server = job_server;
    }
    if (server.empty()) return 0;
    wattcut::slurm::ServerReportTarget target{server, ""};
    if (!config->server_token_file.empty()) {
      auto token = wattcut::http::ReadTokenFile(config->server_token_file, wattcut::http::TokenPlace::kFirstLine,
                                                "the planning server's token file");
      if (!token.ok()) {
        slurm_error("wattcut: job %s: %s", job_id.c_str(), token.error().message.c_str());
        return 0;
      }
      target.token = *token;
    }
    Status reported = wattcut::slurm::ReportJobEnergy(target, "slurm-" + job_id, node, *end);
    if (!reported.ok()) {
      if (reported.error().code == wattcut::ErrorCode::kNotFound) {
        slurm_info("wattcut: job %s: %s", job_id.c_str(), reported.error().message.c_str());
      } else {
        slurm_error("wattcut: job %s: %s", job_id.c_str(), reported.error().message.c_str());
      }
    }
    return 0;
  } catch (const std::exception& e) {
    slurm_error("wattcut: epilog: %s", e.what());
    return 0;
  }
}

// When a step ends (slurmstepd, as root, remote context). For a batch job's batch script, this is
// the last moment slurmctld still lets the job's AdminComment change without accounting: the energy
// this node's GPUs used so far goes there. The epilog then writes the final value where accounting
// allows it. Never fails.
extern "C" int slurm_spank_exit(spank_t spank, int /*ac*/, char** /*av*/) {
  try {
    if (!spank_remote(spank)) return 0;
    uint32_t step = 0, job_id = 0;
    if (spank_get_item(spank, S_JOB_STEPID, &step) != ESPANK_SUCCESS || step != SLURM_BATCH_SCRIPT) return 0;
    if (spank_get_item(spank, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return 0;
    const std::string id = std::to_string(job_id);
    auto energy = wattcut::slurm::JobEnergyAtAgent(g_config.agent_socket, id);
    if (!energy.ok()) {
      slurm_info("wattcut: job %s: AdminComment not written at the batch script's end: %s", id.c_str(),
                 energy.error().message.c_str());
      return 0;
    }
    const std::string entry = wattcut::slurm::JobEnergyEntry(NodeName(TaskVariables(spank)), *energy);
    if (Status s = wattcut::slurm::RecordAdminComment(g_config.scontrol, id, NodeName(TaskVariables(spank)), entry);
        !s.ok()) {
      slurm_info("wattcut: job %s: AdminComment not written at the batch script's end: %s", id.c_str(),
                 s.error().message.c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    slurm_error("wattcut: %s", e.what());
    return 0;
  }
}
