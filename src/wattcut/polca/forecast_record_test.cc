#include "wattcut/polca/forecast_record.h"

#include <gtest/gtest.h>

#include <limits>

namespace wattcut::polca {
namespace {

constexpr double kUnknown = std::numeric_limits<double>::infinity();

// One reading a second from `from_s` to `to_s` at `fraction`, each also forecast as `forecast`.
void Steady(ForecastRecord& record, int from_s, int to_s, double fraction, double forecast, double ceiling = 1.3) {
  for (int t = from_s; t <= to_s; ++t) {
    record.AddReading(t, fraction, ceiling);
    record.AddForecast(t, forecast, 60, ceiling);
  }
}

TEST(ForecastRecord, AForecastIsCheckedAgainstTheHighestReadingOfTheSpanAfterItsLanding) {
  ForecastRecord record(40, 60);
  record.AddReading(0, 0.90, kUnknown);
  record.AddForecast(0, 0.95, 60, kUnknown);
  for (int t = 1; t < 100; ++t) record.AddReading(t, t == 39 ? 0.99 : (t == 70 ? 0.93 : 0.90), kUnknown);
  EXPECT_EQ(record.size(), 0u) << "open until its span (40 to 100 s) has passed";
  record.AddReading(100, 0.91, kUnknown);
  ASSERT_EQ(record.size(), 1u);
  EXPECT_FALSE(record.MedianError()) << "no median from one forecast";
  // 0.93 at 70 s is the span's highest; 0.99 at 39 s is before the landing.
  for (int t = 1; t < static_cast<int>(ForecastRecord::kMinForecasts); ++t)
    record.AddForecast(100 + t, 0.95, 60, kUnknown);
  for (int t = 101; t <= 500; ++t) record.AddReading(t, 0.93, kUnknown);
  ASSERT_TRUE(record.MedianError());
  EXPECT_NEAR(*record.MedianError(), -0.02, 1e-12);
}

TEST(ForecastRecord, AnUnbiasedForecastHasAMedianErrorNearZero) {
  ForecastRecord record(40, 60);
  Steady(record, 0, 1000, 0.9, 0.9);
  ASSERT_TRUE(record.MedianError());
  EXPECT_NEAR(*record.MedianError(), 0, 1e-12);
}

TEST(ForecastRecord, RecordsOnlyHighForecastsFromAWindowAtLeastHalfFull) {
  ForecastRecord record(40, 60);
  for (int t = 0; t <= 1000; ++t) {
    record.AddReading(t, 0.80, 1.3);
    record.AddForecast(t, 0.84, 60, 1.3);  // below 85 %: not where the policy acts
    record.AddForecast(t, 0.95, 29, 1.3);  // from a window of 29 s (of 60): a guess
  }
  EXPECT_EQ(record.size(), 0u);
  EXPECT_FALSE(record.MedianError());
}

TEST(ForecastRecord, ReadingsUnderAnotherLevelCountAtTheForecastsLevel) {
  // Forecast 1.00 under a level with ceiling 1.30; the row is then locked to a level with ceiling
  // 1.20 and reads 0.84 there: at the forecast's level, 0.84 x 1.30 / 1.20 = 0.91.
  ForecastRecord record(40, 60);
  for (int t = 0; t < 400; ++t) {
    record.AddReading(t, 0.84, 1.20);
    if (t < 300) record.AddForecast(t, 1.00, 60, 1.30);
  }
  ASSERT_TRUE(record.MedianError());
  EXPECT_NEAR(*record.MedianError(), 0.84 * 1.30 / 1.20 - 1.00, 1e-12);
  // Where a ceiling is unknown, the reading counts as read.
  ForecastRecord unknown(40, 60);
  for (int t = 0; t < 400; ++t) {
    unknown.AddReading(t, 0.84, kUnknown);
    if (t < 300) unknown.AddForecast(t, 1.00, 60, 1.30);
  }
  ASSERT_TRUE(unknown.MedianError());
  EXPECT_NEAR(*unknown.MedianError(), -0.16, 1e-12);
}

TEST(ForecastRecord, ASpanWithoutReadingsTellsNothing) {
  ForecastRecord record(40, 60);
  record.AddReading(0, 0.9, 1.3);
  record.AddForecast(0, 0.95, 60, 1.3);
  record.AddReading(500, 0.9, 1.3);  // the brake held the row from 1 s to 499 s
  EXPECT_EQ(record.size(), 0u);
}

TEST(ForecastRecord, RemembersTheLastHourOnly) {
  ForecastRecord record(40, 60);
  Steady(record, 0, 1000, 0.90, 0.95);  // over-predicted by 5 %
  ASSERT_TRUE(record.MedianError());
  EXPECT_NEAR(*record.MedianError(), -0.05, 1e-12);
  // An hour later, the over-predicting forecasts are gone; the new ones are unbiased.
  Steady(record, 1001, 1000 + static_cast<int>(ForecastRecord::kMemoryS) + 200, 0.90, 0.90);
  ASSERT_TRUE(record.MedianError());
  EXPECT_NEAR(*record.MedianError(), 0, 1e-12);
  EXPECT_LE(record.size(), static_cast<size_t>(ForecastRecord::kMemoryS) + 1);
}

TEST(ForecastRecord, RepeatedOrOlderReadingsAndForecastsAreIgnored) {
  ForecastRecord once(40, 60);
  ForecastRecord twice(40, 60);
  for (int t = 0; t < 600; ++t) {
    const double fraction = t % 7 == 0 ? 0.97 : 0.9;
    once.AddReading(t, fraction, 1.3);
    once.AddForecast(t, 0.95, 60, 1.3);
    for (int k = 0; k < 2; ++k) {
      twice.AddReading(t, fraction, 1.3);
      twice.AddReading(t - 5, 1.5, 1.3);  // out of order: ignored, not a spike
      twice.AddForecast(t, 0.95, 60, 1.3);
    }
  }
  EXPECT_EQ(once.size(), twice.size());
  ASSERT_TRUE(once.MedianError());
  EXPECT_EQ(*once.MedianError(), *twice.MedianError());
}

TEST(ForecastRecord, ClearForgetsEverything) {
  ForecastRecord record(40, 60);
  Steady(record, 0, 1000, 0.90, 0.95);
  record.Clear();
  EXPECT_EQ(record.size(), 0u);
  EXPECT_FALSE(record.MedianError());
  record.AddReading(5, 0.9, 1.3);  // time may start again after a clear
  record.AddForecast(5, 0.95, 60, 1.3);
  record.AddReading(60, 0.9, 1.3);
  record.AddReading(106, 0.9, 1.3);
  EXPECT_EQ(record.size(), 1u);
}

// One reading a second from `from_s` to `to_s` at `fraction`, each also a young forecast of
// `base` + `trend`.
void Young(ForecastRecord& record, int from_s, int to_s, double fraction, double base, double trend) {
  for (int t = from_s; t <= to_s; ++t) {
    record.AddReading(t, fraction, 1.3);
    record.AddYoungForecast(t, base, trend, 1.3);
  }
}

TEST(ForecastRecord, AYoungForecastIsCheckedForTheShareOfItsTrendThatCameTrue) {
  // Forecasts of 90 % + 4 % of trend on a row reading 92 %: half the trend came true, and the
  // forecast was 2 % too high.
  ForecastRecord record(40, 60);
  Young(record, 0, 100 + static_cast<int>(ForecastRecord::kMinYoungForecasts) - 2, 0.92, 0.90, 0.04);
  EXPECT_FALSE(record.YoungTrendShare()) << "one forecast short of a median";
  EXPECT_FALSE(record.YoungMedianError());
  Young(record, 100 + static_cast<int>(ForecastRecord::kMinYoungForecasts) - 1, 400, 0.92, 0.90, 0.04);
  ASSERT_TRUE(record.YoungTrendShare());
  EXPECT_NEAR(*record.YoungTrendShare(), 0.5, 1e-12);
  ASSERT_TRUE(record.YoungMedianError());
  EXPECT_NEAR(*record.YoungMedianError(), -0.02, 1e-12);
  EXPECT_EQ(record.size(), 0u) << "young forecasts are kept apart from the others";
  EXPECT_FALSE(record.MedianError());
}

TEST(ForecastRecord, AYoungTrendsShareIsWithinZeroAndOne) {
  ForecastRecord below(40, 60);
  Young(below, 0, 400, 0.85, 0.90, 0.04);  // the row fell back below the forecast's base
  ASSERT_TRUE(below.YoungTrendShare());
  EXPECT_EQ(*below.YoungTrendShare(), 0);
  EXPECT_NEAR(*below.YoungMedianError(), -0.09, 1e-12);
  ForecastRecord above(40, 60);
  Young(above, 0, 400, 1.00, 0.90, 0.04);  // it rose further than the trend said
  ASSERT_TRUE(above.YoungTrendShare());
  EXPECT_EQ(*above.YoungTrendShare(), 1);
  EXPECT_NEAR(*above.YoungMedianError(), 0.06, 1e-12);
}

TEST(ForecastRecord, RecordsOnlyRisingYoungForecastsThatReachWhereThePolicyActs) {
  ForecastRecord record(40, 60);
  for (int t = 0; t <= 1000; ++t) {
    record.AddReading(t, 0.80, 1.3);
    record.AddYoungForecast(t, 0.83, 0.01, 1.3);  // 84 %: below where the policy may act
    record.AddYoungForecast(t, 0.95, 0, 1.3);     // no trend: nothing to check
  }
  EXPECT_FALSE(record.YoungTrendShare());
  Young(record, 1001, 1400, 0.80, 0.84, 0.02);
  ASSERT_TRUE(record.YoungTrendShare());
  record.Clear();
  EXPECT_FALSE(record.YoungTrendShare()) << "a clear forgets young forecasts too";
  EXPECT_FALSE(record.YoungMedianError());
}

TEST(ForecastRecord, RemembersTheLastHourOfYoungForecastsOnly) {
  ForecastRecord record(40, 60);
  Young(record, 0, 600, 0.90, 0.90, 0.04);  // none of the trend came true
  ASSERT_TRUE(record.YoungTrendShare());
  EXPECT_EQ(*record.YoungTrendShare(), 0);
  Young(record, 601, 600 + static_cast<int>(ForecastRecord::kMemoryS) + 200, 0.94, 0.90, 0.04);
  ASSERT_TRUE(record.YoungTrendShare());
  EXPECT_NEAR(*record.YoungTrendShare(), 1, 1e-12) << "an hour later, every trend came true";
}

}  // namespace
}  // namespace wattcut::polca
