#include "wattcut/polca/training_job.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "wattcut/base/shared_data_testing.h"

namespace wattcut::polca {
namespace {

std::string ErrorOf(const std::string& text) {
  Result<PolcaConfig> c = ParseConfig(text, "row.conf");
  return c.ok() ? std::string("(accepted)") : c.error().message;
}

TEST(TrainingConfig, DefaultsTrainNothingAndKeysAreChecked) {
  PolcaConfig a100 = *BuiltInConfig("a100");
  EXPECT_EQ(a100.row.training_share, 0);
  EXPECT_TRUE(a100.training.profile.empty());
  Result<PolcaConfig> c = ParseConfig(
      "row.training_share = 0.25\ntraining.profile = p.csv\ntraining.stages = 4\n"
      "training.microbatches = 12\ntraining.plan_without_target = all-max\n",
      "row.conf");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->training.stages, 4);
  EXPECT_EQ(c->training.plan_without_target, "all-max");
  // Every key is written back.
  EXPECT_NE(FormatConfig(*c).find("row.training_share = 0.25\n"), std::string::npos);
  EXPECT_NE(FormatConfig(*c).find("training.microbatches = 12\n"), std::string::npos);

  EXPECT_EQ(ErrorOf("row.training_share = 1\n"),
            "row.conf: row.training_share must be in [0, 1) (at least some servers serve), got 1");
  EXPECT_EQ(ErrorOf("row.training_share = 0.5\ntraining.stages = 3\n"),
            "row.conf: training.stages must divide server.gpus (one pipeline per server, server.gpus / stages GPUs "
            "per stage), got stages=3 gpus=8");
  // An inference row keeps any server size.
  EXPECT_EQ(ErrorOf("training.stages = 3\n"), "(accepted)");
  EXPECT_EQ(ErrorOf("training.microbatches = 0\n"),
            "row.conf: training.microbatches must be between 1 and 4096, got 0");
  EXPECT_EQ(ErrorOf("training.timeline_step_s = 0\n"),
            "row.conf: training.timeline_step_s must be between 0.01 s and 60 s, got 0");
  EXPECT_EQ(ErrorOf("training.plan_without_target = slowest\n"),
            "row.conf: training.plan_without_target must be fastest or all-max, got 'slowest'");
  EXPECT_EQ(ErrorOf("training.stages = many\n"),
            "row.conf:1: key 'training.stages': expected a decimal number (such as 0.8 or 6.5e3), got 'many'");
  EXPECT_EQ(ErrorOf("training.profil = p.csv\n"), "row.conf:1: key 'training.profil': unknown key");
}

TEST(TrainingConfig, AProfilePathIsRelativeToTheConfigFile) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("wattcut_training_config_test." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "row.conf").string();
  std::ofstream(path) << "row.training_share = 0.25\ntraining.profile = profiles/gpt3.csv\n";
  Result<PolcaConfig> c = ReadConfigFile(path);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->training.profile, (dir / "profiles/gpt3.csv").string());
  std::ofstream(path) << "row.training_share = 0.25\ntraining.profile = /data/gpt3.csv\n";
  EXPECT_EQ(ReadConfigFile(path)->training.profile, "/data/gpt3.csv");
  std::filesystem::remove_all(dir);
}

TEST(TrainingJobBuild, MissingOrBadProfileIsAnError) {
  PolcaConfig c = *BuiltInConfig("a100");
  c.row.training_share = 0.25;
  EXPECT_EQ(BuildTrainingJob(c).error().message,
            "row.training_share = 0.25 needs the training job's stage profile: set training.profile (or "
            "--training-profile)");
  c.training.profile = "/nonexistent/profile.csv";
  EXPECT_EQ(BuildTrainingJob(c).error().message.rfind("training.profile /nonexistent/profile.csv: ", 0), 0u)
      << BuildTrainingJob(c).error().message;
}

TEST(TrainingJobBuild, Gpt3OnA100GivesLocksPlansAndAllMax) {
  WATTCUT_REQUIRE_SHARED_FILE(profile, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  PolcaConfig c = *BuiltInConfig("a100");
  c.row.training_share = 0.25;
  c.training.profile = profile;
  c.training.microbatches = 8;  // a small frontier: the test stays cheap
  Result<TrainingJob> job = BuildTrainingJob(c);
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->stages, 8);
  EXPECT_EQ(job->tensor_parallel, 1);
  ASSERT_GE(job->locks.size(), 2u);
  // Locks lowest clock first, each slower and drawing less than the one above.
  for (size_t i = 1; i < job->locks.size(); ++i) {
    EXPECT_LT(job->locks[i - 1].freq_mhz, job->locks[i].freq_mhz);
    EXPECT_GE(job->locks[i - 1].iteration_s(), job->locks[i].iteration_s());
    EXPECT_TRUE(ValidateTimeline(job->locks[i]).ok());
  }
  EXPECT_EQ(job->locks.back().freq_mhz, 1410);
  EXPECT_DOUBLE_EQ(job->all_max.iteration_s(), job->locks.back().iteration_s());
  EXPECT_EQ(job->LockFor(1410, 0), nullptr);
  EXPECT_EQ(job->LockFor(1275, 0)->freq_mhz, 1275);
  // The server draws the non-GPU power on top of the GPUs': above 1,700 W, below nameplate.
  EXPECT_GT(job->all_max.average_server_w(), 1700 + 8 * 100);
  EXPECT_LT(job->all_max.average_server_w(), c.server.nameplate_w);
  // Plans fastest first; each target's plan is at or below it when met.
  ASSERT_EQ(job->targets_w.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    const TrainingTimeline& plan = job->plans[job->target_plan[k]];
    if (job->target_met[k]) {
      EXPECT_LE(plan.peak_power_per_gpu_w, job->targets_w[k]);
    }
    bool met = false;
    EXPECT_EQ(&job->PlanFor(job->targets_w[k], &met), &plan);
    EXPECT_EQ(met, static_cast<bool>(job->target_met[k]));
  }
  for (size_t i = 1; i < job->plans.size(); ++i) {
    EXPECT_LE(job->plans[i - 1].iteration_s(), job->plans[i].iteration_s());
  }
  // The fastest plan is as fast as AllMax (to the planner's 1 ms unit) and draws less.
  const TrainingTimeline& fastest = job->plans[job->fastest_plan];
  EXPECT_NEAR(fastest.iteration_s(), job->all_max.iteration_s(), 0.01 * job->all_max.iteration_s());
  EXPECT_LT(fastest.average_server_w(), job->all_max.average_server_w());
  EXPECT_TRUE(job->warnings.empty());

  // An A100 profile on the H100 config: its locks would never bite above 1410 MHz; said so.
  PolcaConfig h100 = *BuiltInConfig("h100");
  h100.row.training_share = 0.25;
  h100.training = c.training;
  Result<TrainingJob> mismatched = BuildTrainingJob(h100);
  ASSERT_TRUE(mismatched.ok()) << mismatched.error().message;
  ASSERT_EQ(mismatched->warnings.size(), 1u);
  EXPECT_NE(mismatched->warnings[0].find("the profile's clocks (855 to 1410 MHz) are not the GPU's (gpu.max_freq_mhz "
                                         "1980, policy.t2_low_mhz 1530)"),
            std::string::npos)
      << mismatched->warnings[0];
}

}  // namespace
}  // namespace wattcut::polca
