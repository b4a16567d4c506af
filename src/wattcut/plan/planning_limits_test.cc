#include "wattcut/plan/planning_limits.h"

#include <gtest/gtest.h>

#include <limits>

namespace wattcut {
namespace {

TEST(PlanningLimits, CoverTheLargestRealJobs) {
  // Megatron-LM: up to ~128 stages, a few thousand microbatches.
  EXPECT_TRUE(CheckPipelineShape(128, 4096).ok());
  EXPECT_TRUE(CheckPipelineShape(8, 16384).ok());
  EXPECT_TRUE(CheckPipelineShape(1024, 512).ok());
  EXPECT_TRUE(CheckPipelineShape(1, 1).ok());
  // GPT-3 on 8 stages x 4096 microbatches at 10 ms: ~14,000 points.
  EXPECT_TRUE(CheckFrontierSize(60'000, 46'000, 2 * 8 * 4096, 0.01, 0.05).ok());
  EXPECT_TRUE(CheckDurationTableEntries(256 * 1000, 0.0001).ok());
}

TEST(PlanningLimits, StagesAndMicrobatchesNameTheFieldAndTheRange) {
  for (int stages : {0, -3, 1025, 100000, std::numeric_limits<int>::max()}) {
    Status s = CheckPipelineShape(stages, 12);
    ASSERT_FALSE(s.ok()) << stages;
    EXPECT_EQ(s.error().message, "pipeline stages must be in [1, 1024], got " + std::to_string(stages));
  }
  for (int microbatches : {0, -1, 16385, 20000, 30000, 100000}) {
    Status s = CheckPipelineShape(8, microbatches);
    ASSERT_FALSE(s.ok()) << microbatches;
    EXPECT_EQ(s.error().message, "microbatches must be in [1, 16384], got " + std::to_string(microbatches));
  }
  EXPECT_TRUE(CheckStages(kMaxStages).ok());
  EXPECT_FALSE(CheckStages(kMaxStages + 1).ok());
  EXPECT_TRUE(CheckMicrobatches(kMaxMicrobatches).ok());
  EXPECT_FALSE(CheckMicrobatches(kMaxMicrobatches + 1).ok());
}

TEST(PlanningLimits, ComputationsBoundTheProduct) {
  Status s = CheckPipelineShape(1024, 16384);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "computations per iteration (2 x 1024 stages x 16384 microbatches = 33554432) must be at most 1048576");
  EXPECT_TRUE(CheckPipelineShape(128, 4096).ok());   // exactly 2^20
  EXPECT_FALSE(CheckPipelineShape(128, 4097).ok());  // one microbatch more
}

TEST(PlanningLimits, DurationTableSaysSizeLimitAndAFittingUnitTime) {
  EXPECT_TRUE(CheckDurationTableEntries(kMaxDurationTableEntries, 1e-6).ok());
  Status s = CheckDurationTableEntries(600'000'000, 1e-9);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "unit_time_s 1e-09 s is too fine for this profile: its cost tables would have 600000000 entries, more "
            "than the limit of 16777216; use a unit time of 3.6e-08 s or coarser");
}

TEST(PlanningLimits, FrontierPointsAndWork) {
  EXPECT_TRUE(CheckFrontierSize(kMaxFrontierPoints, 1, 2, 0.001, 1).ok());  // exactly the limit
  Status points = CheckFrontierSize(3'000'000, 1, 2, 1e-6, 1);
  ASSERT_FALSE(points.ok());
  EXPECT_EQ(points.error().message,
            "the frontier would have up to 3e+06 points (one per unit time of 1e-06 s between the slowest and the "
            "fastest iteration) over 2 computations; the limits are 1000000 points and points x computations <= "
            "1e+09: use a unit time of about 3e-06 s or coarser, or fewer microbatches");
  // 557,000 points over 262,144 computations (GPT-3, 8 x 16384 at 1 ms): 1.5e11 > 1e9.
  Status work = CheckFrontierSize(2'400'000, 1'843'001, 2 * 8 * 16384, 0.001, 0.05);
  ASSERT_FALSE(work.ok());
  EXPECT_NE(work.error().message.find("use fewer microbatches (a unit time coarse enough, about 0.15 s, is longer "
                                      "than the fastest computation, 0.05 s)"),
            std::string::npos)
      << work.error().message;
  Status coarser = CheckFrontierSize(2'400'000, 1'843'001, 2 * 8 * 16384, 0.001, 0.5);
  ASSERT_FALSE(coarser.ok());
  EXPECT_NE(coarser.error().message.find(": use a unit time of about 0.15 s or coarser, or fewer microbatches"),
            std::string::npos)
      << coarser.error().message;
  Status overflow = CheckFrontierSize(1e300, 1e300, 2, 1e-300, 1);
  ASSERT_FALSE(overflow.ok());
  EXPECT_NE(overflow.error().message.find("more than the 2^53 an iteration may have"), std::string::npos);
  EXPECT_FALSE(CheckFrontierSize(std::numeric_limits<double>::infinity(), 0, 2, 1e-9, 1).ok());
  EXPECT_FALSE(CheckFrontierSize(std::numeric_limits<double>::quiet_NaN(), 0, 2, 1e-9, 1).ok());
}

TEST(PlanningLimits, IterationEnergy) {
  EXPECT_TRUE(CheckIterationEnergy(1e12).ok());
  EXPECT_FALSE(CheckIterationEnergy(1e300).ok());
  EXPECT_FALSE(CheckIterationEnergy(std::numeric_limits<double>::infinity()).ok());
  EXPECT_FALSE(CheckIterationEnergy(std::numeric_limits<double>::quiet_NaN()).ok());
}

}  // namespace
}  // namespace wattcut
