#include "wattcut/base/index_ranges.h"

#include <gtest/gtest.h>

namespace wattcut {
namespace {

TEST(IndexRanges, RunsOfConsecutiveIndicesBecomeRanges) {
  EXPECT_EQ(IndexRangesText({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(IndexRangesText({0, 2, 5, 6, 7}), "0,2,5-7");
  EXPECT_EQ(IndexRangesText({4}), "4");
  EXPECT_EQ(IndexRangesText({}), "none");
}

TEST(IndexRanges, ParsesWhatItWritesAndRefusesTheRestNamingIt) {
  EXPECT_EQ(*ParseIndexRanges("0,2,5-7", 4095, "GPUs"), (std::vector<int>{0, 2, 5, 6, 7}));
  EXPECT_EQ(*ParseIndexRanges("3", 4095, "GPUs"), (std::vector<int>{3}));
  EXPECT_TRUE(ParseIndexRanges("", 4095, "GPUs")->empty());
  for (const char* bad : {"a", "1,", ",1", "3-1", "1-", "-1", "1 2", "4096", "99999999999"}) {
    auto parsed = ParseIndexRanges(bad, 4095, "$SLURM_JOB_GPUS");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().message.rfind(std::string("$SLURM_JOB_GPUS '") + bad + "'", 0), 0u)
        << parsed.error().message;
  }
  EXPECT_EQ(ParseIndexRanges("0,x", 7, "GPUs").error().message,
            "GPUs '0,x': 'x' is not an index or a range (0 to 7); expected indices and ranges such as 0,1,4-7");
}

}  // namespace
}  // namespace wattcut
