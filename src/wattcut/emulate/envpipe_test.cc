#include "wattcut/emulate/envpipe.h"

#include <gtest/gtest.h>

#include "wattcut/plan/all_max.h"
#include "wattcut/profile/gpu_model.h"

namespace wattcut {
namespace {

TEST(EnvPipe, EnvelopeRunsAtMaxAndTheIterationIsNoSlowerThanAllMax) {
  const GpuModel* model = *FindGpuModel("a100-sxm");
  Profile profile = MakeModelProfile(*model, 4);
  PipelineSchedule schedule = *BuildPipelineSchedule(PipelineScheduleKind::k1F1B, 4, 8);
  EnvPipePlan plan = PlanEnvPipe(profile, schedule, model->p2p_power_w);
  const int max_freq = profile.max_freq_mhz();
  for (size_t s = 0; s < schedule.size(); ++s) {
    size_t last_backward = 0;
    for (size_t i = 0; i < schedule[s].size(); ++i) {
      if (schedule[s][i].kind == InstructionKind::kBackward) last_backward = i;
    }
    EXPECT_EQ(plan.freq_mhz[s][0], max_freq) << "stage " << s << " first forward";
    EXPECT_EQ(plan.freq_mhz[s][last_backward], max_freq) << "stage " << s << " last backward";
    if (s + 1 == schedule.size()) {
      for (int f : plan.freq_mhz[s]) EXPECT_EQ(f, max_freq);
    }
  }
  const double all_max_time = AllMaxIterationTime(profile, schedule);
  EXPECT_LE(plan.iteration_time_s, all_max_time * (1 + 1e-9));
  // It saves energy, and some computations were slowed down.
  EXPECT_LT(plan.energy_j, AllMaxEnergy(profile, schedule, plan.iteration_time_s, model->p2p_power_w));
  int slowed = 0;
  for (const auto& stage : plan.freq_mhz) {
    for (int f : stage) slowed += f < max_freq ? 1 : 0;
  }
  EXPECT_GT(slowed, 0);
  EXPECT_GT(plan.rounds, 0);
}

}  // namespace
}  // namespace wattcut
