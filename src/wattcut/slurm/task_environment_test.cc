#include "wattcut/slurm/task_environment.h"

#include <gtest/gtest.h>

#include <map>

namespace wattcut::slurm {
namespace {

TaskVariable From(std::map<std::string, std::string> env) {
  return [env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

const std::map<std::string, std::string> kSlurmTask = {
    {"SLURM_JOB_ID", "4711"}, {"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"}};

TEST(TaskEnvironment, AManagedTaskGetsTheServerItsJobAndItsRankFromSlurm) {
  PluginConfig config;
  config.server_url = "http://10.0.0.5:7787";
  const TaskEnvironment env =
      TaskEnvironmentFor(config, WattcutMode{WattcutMode::Kind::kFastest, 0}, "", From(kSlurmTask));
  EXPECT_EQ(env.warning, "");
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"WATTCUT_MODE", "fastest"},
      {"WATTCUT_SERVER_URL", "http://10.0.0.5:7787"},
      {"WATTCUT_JOB_NAME", "slurm-4711"},
      {"WATTCUT_RANK", "5"},
      {"WATTCUT_WORLD_SIZE", "8"},
      {"WATTCUT_LOCAL_RANK", "1"},
      {"WATTCUT_GPU", "1"},
      {"WATTCUT_AGENT_SOCKET", "/run/wattcut/agent.sock"}};
  EXPECT_EQ(env.set, expected);
}

TEST(TaskEnvironment, ATasksGpuIsItsLocalRanksEntryInTheGpusSlurmGave) {
  PluginConfig config;
  config.server_url = "http://10.0.0.5:7787";
  auto gpu = [&config](std::map<std::string, std::string> vars) {
    const TaskEnvironment env =
        TaskEnvironmentFor(config, WattcutMode{WattcutMode::Kind::kFastest, 0}, "", From(std::move(vars)));
    return std::map<std::string, std::string>(env.set.begin(), env.set.end())["WATTCUT_GPU"];
  };
  auto with = [](std::map<std::string, std::string> extra) {
    auto vars = kSlurmTask;
    vars.insert(extra.begin(), extra.end());
    return vars;
  };
  EXPECT_EQ(gpu(with({{"SLURM_JOB_GPUS", "4,5,6,7"}})), "5") << "local rank 1 of a job on GPUs 4-7";
  EXPECT_EQ(gpu(with({{"SLURM_STEP_GPUS", "2,3"}, {"SLURM_JOB_GPUS", "0,1,2,3"}})), "3") << "the step's first";
  EXPECT_EQ(gpu(with({{"SLURM_JOB_GPUS", "6"}})), "1") << "fewer GPUs than local ranks: the local rank";
  EXPECT_EQ(gpu(with({{"SLURM_JOB_GPUS", "bogus"}})), "1");
  EXPECT_EQ(gpu(with({{"LOCAL_RANK", "2"}, {"SLURM_JOB_GPUS", "0-3"}})), "2") << "the launcher's local rank";
}

TEST(TaskEnvironment, TheLaunchersRanksAndTheJobsServerWin) {
  PluginConfig config;
  config.server_url = "http://10.0.0.5:7787";
  auto env_vars = kSlurmTask;
  env_vars["RANK"] = "3";
  env_vars["WORLD_SIZE"] = "16";
  env_vars["LOCAL_RANK"] = "3";
  const TaskEnvironment env =
      TaskEnvironmentFor(config, WattcutMode{WattcutMode::Kind::kPower, 250}, "http://own:1", From(env_vars));
  std::map<std::string, std::string> got(env.set.begin(), env.set.end());
  EXPECT_EQ(got["WATTCUT_SERVER_URL"], "http://own:1");
  EXPECT_EQ(got["WATTCUT_MODE"], "power:250");
  EXPECT_EQ(got["WATTCUT_RANK"], "3");
  EXPECT_EQ(got["WATTCUT_WORLD_SIZE"], "16");
  EXPECT_EQ(got["WATTCUT_LOCAL_RANK"], "3");
}

TEST(TaskEnvironment, OffOrTheDefaultOffSetsNothing) {
  PluginConfig config;
  config.server_url = "http://10.0.0.5:7787";
  EXPECT_TRUE(TaskEnvironmentFor(config, WattcutMode{WattcutMode::Kind::kOff, 0}, "", From(kSlurmTask)).set.empty());
  EXPECT_TRUE(TaskEnvironmentFor(config, std::nullopt, "", From(kSlurmTask)).set.empty());
  config.default_mode = WattcutMode{WattcutMode::Kind::kLeastEnergy, 0};
  EXPECT_EQ(TaskEnvironmentFor(config, std::nullopt, "", From(kSlurmTask)).set.front().second, "least-energy");
}

TEST(TaskEnvironment, NoServerKnownRunsTheJobUnmanagedWithOneWarning) {
  const TaskEnvironment env =
      TaskEnvironmentFor(PluginConfig{}, WattcutMode{WattcutMode::Kind::kFastest, 0}, "", From(kSlurmTask));
  EXPECT_TRUE(env.set.empty());
  EXPECT_EQ(
      env.warning,
      "--wattcut=fastest but no planning server is known (neither --wattcut-server nor the plugin's server=): the "
      "job runs unmanaged");
}

TEST(GpuFreqConflict, WattcutAndAUniformGpuClockAreRefusedTogether) {
  PluginConfig config;
  auto env_vars = kSlurmTask;
  env_vars["SLURM_GPU_FREQ"] = "medium";
  auto conflict = GpuFreqConflict(config, WattcutMode{WattcutMode::Kind::kFastest, 0}, From(env_vars));
  ASSERT_TRUE(conflict.has_value());
  EXPECT_EQ(*conflict,
            "--wattcut=fastest and --gpu-freq=medium together: --gpu-freq holds every GPU of the job at one clock, "
            "wattcut changes each GPU's clock computation by computation; give one of them (--wattcut=off keeps "
            "--gpu-freq)");
  // Off (given or by default) keeps --gpu-freq; without --gpu-freq nothing is refused.
  EXPECT_FALSE(GpuFreqConflict(config, WattcutMode{WattcutMode::Kind::kOff, 0}, From(env_vars)).has_value());
  EXPECT_FALSE(GpuFreqConflict(config, std::nullopt, From(env_vars)).has_value());
  EXPECT_FALSE(GpuFreqConflict(config, WattcutMode{WattcutMode::Kind::kFastest, 0}, From(kSlurmTask)).has_value());
  auto sbatch_env = kSlurmTask;
  sbatch_env["SBATCH_GPU_FREQ"] = "low";
  EXPECT_TRUE(GpuFreqConflict(config, WattcutMode{WattcutMode::Kind::kLeastEnergy, 0}, From(sbatch_env)).has_value());
}

}  // namespace
}  // namespace wattcut::slurm
