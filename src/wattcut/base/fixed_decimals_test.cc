#include "wattcut/base/fixed_decimals.h"

#include <gtest/gtest.h>

namespace wattcut {
namespace {

TEST(FixedDecimals, FormatsLikePrintf) {
  EXPECT_EQ(FixedDecimals(3.14159, 2), "3.14");
  EXPECT_EQ(FixedDecimals(2.5, 0), "2");
  EXPECT_EQ(FixedDecimals(-0.125, 1), "-0.1");
  EXPECT_EQ(FixedDecimals(7326.61, 3), "7326.610");
}

// Issue 54: `plan schedule --objective energy` printed "energy -0.00 % below the least-energy plan".
TEST(FixedDecimals, AValueThatRoundsToZeroHasNoSign) {
  EXPECT_EQ(FixedDecimals(-0.0001, 2), "0.00");
  EXPECT_EQ(FixedDecimals(-0.0, 1), "0.0");
  EXPECT_EQ(FixedDecimals(-0.4, 0), "0");
  EXPECT_EQ(FixedDecimals(-0.005001, 2), "-0.01");
  EXPECT_EQ(FixedDecimals(-10.0, 0), "-10");
}

TEST(FixedDecimals, NeverTruncatesAHugeValue) {
  const std::string text = FixedDecimals(1e80, 2);
  EXPECT_EQ(text.size(), 84u);  // 81 digits, a point, 2 decimals
  EXPECT_EQ(text.substr(text.size() - 3), ".00");
}

}  // namespace
}  // namespace wattcut
