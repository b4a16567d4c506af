#include "wattcut/polca/power_forecast.h"

#include <gtest/gtest.h>

namespace wattcut::polca {
namespace {

TEST(PowerForecast, AFlatRowExpectsItsLevel) {
  PowerForecast f(60);
  EXPECT_EQ(f.PeakAt(10), 0);
  f.Add(1, 0.9);
  EXPECT_DOUBLE_EQ(f.PeakAt(100), 0.9) << "one reading: that reading";
  for (int t = 2; t <= 60; ++t) f.Add(t, 0.9);
  EXPECT_NEAR(f.PeakAt(102), 0.9, 1e-12);
}

TEST(PowerForecast, ARisingTrendIsCarriedToTheTimeAsked) {
  PowerForecast f(60);
  for (int t = 0; t <= 60; ++t) f.Add(t, 0.80 + 0.001 * t);  // +0.1 % of the budget a second
  EXPECT_NEAR(f.PeakAt(60), 0.86, 1e-9);
  EXPECT_NEAR(f.PeakAt(102), 0.902, 1e-9) << "42 s on";
}

TEST(PowerForecast, AFallingTrendNeverExpectsLessThanNow) {
  PowerForecast f(60);
  for (int t = 0; t <= 60; ++t) f.Add(t, 0.95 - 0.001 * t);
  EXPECT_NEAR(f.PeakAt(102), 0.89, 1e-9) << "the line at the newest reading, not 42 s further down";
}

TEST(PowerForecast, ThePeaksPartsAreTheLevelWithItsRisesAndTheTrendAhead) {
  PowerForecast rising(60);
  for (int t = 0; t <= 10; ++t) rising.Add(t, t == 5 ? 0.86 : 0.80 + 0.001 * t);
  const PowerForecast::Peak up = rising.PeakPartsAt(52);
  EXPECT_DOUBLE_EQ(up.value, rising.PeakAt(52));
  EXPECT_NEAR(up.base + up.trend, up.value, 1e-12);
  EXPECT_GT(up.base, 0.81) << "the line at the newest reading plus the 86 % reading's rise above it";
  EXPECT_GT(up.trend, 0) << "a young window looks ahead as far as it has looked back: 10 s";

  PowerForecast falling(60);
  for (int t = 0; t <= 60; ++t) falling.Add(t, 0.95 - 0.001 * t);
  const PowerForecast::Peak down = falling.PeakPartsAt(102);
  EXPECT_EQ(down.trend, 0) << "a falling trend adds nothing";
  EXPECT_DOUBLE_EQ(down.value, down.base);

  PowerForecast one(60);
  one.Add(3, 0.7);
  EXPECT_EQ(one.PeakPartsAt(50).base, 0.7);
  EXPECT_EQ(one.PeakPartsAt(50).trend, 0);
}

TEST(PowerForecast, SpikesInTheWindowAreExpectedAgain) {
  PowerForecast f(60);
  for (int t = 0; t <= 60; ++t) f.Add(t, t == 30 ? 0.95 : 0.85);
  const double peak = f.PeakAt(102);
  EXPECT_GT(peak, 0.94) << "the line plus the window's largest rise above it";
  EXPECT_LT(peak, 0.96);
}

TEST(PowerForecast, KeepsOnlyItsWindowAndIgnoresRepeatedOrOlderReadings) {
  PowerForecast f(10);
  for (int t = 0; t <= 100; ++t) f.Add(t, 0.5);
  EXPECT_EQ(f.size(), 11u);
  EXPECT_DOUBLE_EQ(f.span_s(), 10);
  f.Add(100, 2.0);  // delivered twice
  f.Add(50, 2.0);   // out of order
  EXPECT_NEAR(f.PeakAt(140), 0.5, 1e-12);
  f.Clear();
  EXPECT_EQ(f.size(), 0u);
  EXPECT_EQ(f.span_s(), 0);
}

TEST(PowerForecast, HighestIsTheWindowsHighestReading) {
  PowerForecast f(10);
  EXPECT_EQ(f.Highest(), 0) << "empty";
  f.Add(0, 0.95);
  for (int t = 1; t <= 10; ++t) f.Add(t, 0.9);
  EXPECT_DOUBLE_EQ(f.Highest(), 0.95);
  f.Add(11, 0.9);  // 0.95 leaves the window
  EXPECT_DOUBLE_EQ(f.Highest(), 0.9);
}

TEST(PowerForecast, StaysWellConditionedDaysIntoARun) {
  PowerForecast f(60);
  const double day7 = 7 * 86400.0;
  for (int k = 0; k <= 60; ++k) f.Add(day7 + k, 0.8 + 0.002 * k);
  EXPECT_NEAR(f.PeakAt(day7 + 100), 1.0, 1e-9);
}

}  // namespace
}  // namespace wattcut::polca
