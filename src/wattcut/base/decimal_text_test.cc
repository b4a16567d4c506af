#include "wattcut/base/decimal_text.h"

#include <gtest/gtest.h>

namespace wattcut {
namespace {

TEST(ParseDecimal, ReadsWhatToolsPrint) {
  EXPECT_DOUBLE_EQ(*ParseDecimal("85.59"), 85.59);
  EXPECT_DOUBLE_EQ(*ParseDecimal("-3"), -3);
  EXPECT_DOUBLE_EQ(*ParseDecimal("+1.5e3"), 1500);
  EXPECT_DOUBLE_EQ(*ParseDecimal(".5"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseDecimal("1714564800.123"), 1714564800.123);
}

TEST(ParseDecimal, RefusesTheRest) {
  for (const char* bad : {"", " 1", "1 ", "1,5", "0x10", "inf", "nan", "NaN", "1e400", "1e", ".", "-", "1.2.3", "1W"}) {
    EXPECT_FALSE(ParseDecimal(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace wattcut
