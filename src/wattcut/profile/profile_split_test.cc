#include <gtest/gtest.h>

#include "wattcut/profile/backward_split.h"
#include "wattcut/profile/chunk_split.h"
#include "wattcut/profile/instruction_letters_testing.h"

namespace wattcut {
namespace {

using namespace instruction_letters;

Profile TwoStages() {
  Profile p(2);
  for (int s = 0; s < 2; ++s) {
    p.mutable_measurements(s, F) = {{1000, 0.02 * (s + 1), 4.0}, {1400, 0.01 * (s + 1), 6.0}};
    p.mutable_measurements(s, B) = {{1000, 0.04 * (s + 1), 8.0}, {1400, 0.02 * (s + 1), 12.0}};
  }
  return p;
}

void ExpectMeasurements(const std::vector<Measurement>& got, const std::vector<Measurement>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].freq_mhz, want[i].freq_mhz) << i;
    EXPECT_DOUBLE_EQ(got[i].time_s, want[i].time_s) << i;
    EXPECT_DOUBLE_EQ(got[i].energy_j, want[i].energy_j) << i;
  }
}

TEST(ChunkSplitTest, EachStageBecomesVChunksInModelOrder) {
  Result<Profile> split = SplitStagesIntoChunks(TwoStages(), 2);
  ASSERT_TRUE(split.ok()) << split.error().message;
  ASSERT_EQ(split->num_stages(), 4);
  // Chunks 0 and 1 are halves of stage 0, chunks 2 and 3 halves of stage 1.
  for (int c = 0; c < 4; ++c) {
    const double scale = c < 2 ? 1 : 2;
    ExpectMeasurements(split->measurements(c, F), {{1000, 0.01 * scale, 2.0}, {1400, 0.005 * scale, 3.0}});
    ExpectMeasurements(split->measurements(c, B), {{1000, 0.02 * scale, 4.0}, {1400, 0.01 * scale, 6.0}});
    EXPECT_TRUE(split->measurements(c, BI).empty());
  }
}

TEST(ChunkSplitTest, OneChunkIsTheProfileAndZeroIsRefused) {
  Result<Profile> same = SplitStagesIntoChunks(TwoStages(), 1);
  ASSERT_TRUE(same.ok());
  ExpectMeasurements(same->measurements(1, B), TwoStages().measurements(1, B));
  Result<Profile> zero = SplitStagesIntoChunks(TwoStages(), 0);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "chunks per stage must be >= 1, got 0");
}

TEST(ChunkSplitTest, DeviceRowsRepeatForEachChunkOfTheDevice) {
  Result<Profile> chunks = RepeatDeviceRowsPerChunk(TwoStages(), 3);
  ASSERT_TRUE(chunks.ok()) << chunks.error().message;
  ASSERT_EQ(chunks->num_stages(), 6);
  // Profile stage c * 2 + d is device d's chunk c.
  for (int stage = 0; stage < 6; ++stage) {
    ExpectMeasurements(chunks->measurements(stage, F), TwoStages().measurements(stage % 2, F));
    ExpectMeasurements(chunks->measurements(stage, B), TwoStages().measurements(stage % 2, B));
  }
  Result<Profile> zero = RepeatDeviceRowsPerChunk(TwoStages(), 0);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "chunks per device must be >= 1, got 0");
}

TEST(BackwardSplitTest, HalvesTheBackwardWhereNoSplitIsMeasured) {
  Profile p = TwoStages();
  // Stage 1 measured its own B and W passes: they stay.
  p.mutable_measurements(1, BI) = {{1000, 0.05, 5.0}};
  p.mutable_measurements(1, BW) = {{1000, 0.03, 3.0}};
  EXPECT_TRUE(NeedsBackwardSplit(p));
  Profile split = WithSplitBackward(p);
  ExpectMeasurements(split.measurements(0, BI), {{1000, 0.02, 4.0}, {1400, 0.01, 6.0}});
  ExpectMeasurements(split.measurements(0, BW), {{1000, 0.02, 4.0}, {1400, 0.01, 6.0}});
  ExpectMeasurements(split.measurements(0, B), p.measurements(0, B));
  ExpectMeasurements(split.measurements(1, BI), {{1000, 0.05, 5.0}});
  ExpectMeasurements(split.measurements(1, BW), {{1000, 0.03, 3.0}});
  EXPECT_FALSE(NeedsBackwardSplit(split));
}

}  // namespace
}  // namespace wattcut
