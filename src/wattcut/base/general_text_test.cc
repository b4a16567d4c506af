#include "wattcut/base/general_text.h"

#include <gtest/gtest.h>

#include <limits>

namespace wattcut {
namespace {

TEST(GeneralText, ShortestTextThatReadsBack) {
  EXPECT_EQ(GeneralText(0.0005), "0.0005");
  EXPECT_EQ(GeneralText(5e-05), "5e-05");
  EXPECT_EQ(GeneralText(1e308), "1e+308");
  EXPECT_EQ(GeneralText(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(GeneralText(std::numeric_limits<double>::infinity()), "inf");
}

TEST(GeneralText, SignificantDigits) {
  EXPECT_EQ(GeneralText(1.0 / 3, 6), "0.333333");
  EXPECT_EQ(GeneralText(16777216.0, 6), "1.67772e+07");
  EXPECT_EQ(GeneralText(0.001, 6), "0.001");
}

}  // namespace
}  // namespace wattcut
