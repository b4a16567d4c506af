#include "wattcut/agent/clock_composition.h"

#include <gtest/gtest.h>

namespace wattcut::agent {
namespace {

TEST(ClockComposition, EachCaseOfTheRule) {
  EXPECT_EQ(ComposeSmClocks(std::nullopt, std::nullopt, 210), std::nullopt);
  EXPECT_EQ(ComposeSmClocks(ClockRange{1410, 1410}, std::nullopt, 210), (ClockRange{1410, 1410}));
  EXPECT_EQ(ComposeSmClocks(std::nullopt, 1275, 210), (ClockRange{210, 1275}));
  // The case: a training lock of 1410 under a ceiling of 1275 runs 1275.
  EXPECT_EQ(ComposeSmClocks(ClockRange{1410, 1410}, 1275, 210), (ClockRange{1275, 1275}));
  // A lock below the ceiling is left alone; a range is cut at the ceiling.
  EXPECT_EQ(ComposeSmClocks(ClockRange{1005, 1005}, 1275, 210), (ClockRange{1005, 1005}));
  EXPECT_EQ(ComposeSmClocks(ClockRange{1005, 1410}, 1275, 210), (ClockRange{1005, 1275}));
  // A ceiling below the lowest supported clock (a brake) still bounds both ends.
  EXPECT_EQ(ComposeSmClocks(std::nullopt, 150, 210), (ClockRange{150, 150}));
}

TEST(ClockComposition, SupportedClockAtOrBelow) {
  const std::vector<int> clocks = {1410, 1395, 1380, 210};
  EXPECT_EQ(SupportedClockAtOrBelow(clocks, 1410), 1410);
  EXPECT_EQ(SupportedClockAtOrBelow(clocks, 1400), 1395);
  EXPECT_EQ(SupportedClockAtOrBelow(clocks, 5000), 1410);
  EXPECT_EQ(SupportedClockAtOrBelow(clocks, 211), 210);
  EXPECT_EQ(SupportedClockAtOrBelow(clocks, 209), std::nullopt);
}

TEST(ClockComposition, Text) {
  EXPECT_EQ(AppliedClocksText(std::nullopt), "reset");
  EXPECT_EQ(AppliedClocksText(ClockRange{1200, 1410}), "1200-1410 MHz");
}

}  // namespace
}  // namespace wattcut::agent
