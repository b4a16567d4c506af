#include "wattcut/profile/operation_options.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace wattcut {
namespace {

// ---------------------------------------------------------------------------------------
// PythonFloorDiv. Expected values computed with /usr/bin/python3; where floor(a / b)
// differs, that is noted (those are the cases a naive implementation gets wrong).

TEST(PythonFloorDivTest, MatchesPythonOnTrickyCases) {
  EXPECT_EQ(PythonFloorDiv(0.3, 0.1), 2.0);                     // 0.3 // 0.1 == 2.0   (0.3 / 0.1 == 2.9999999999999996)
  EXPECT_EQ(PythonFloorDiv(1.0, 0.1), 9.0);                     // 1.0 // 0.1 == 9.0   (floor(1.0 / 0.1) == 10)
  EXPECT_EQ(PythonFloorDiv(5.0, 0.1), 49.0);                    // 5.0 // 0.1 == 49.0  (floor(5.0 / 0.1) == 50)
  EXPECT_EQ(PythonFloorDiv(0.7, 0.1), 6.0);                     // 0.7 // 0.1 == 6.0
  EXPECT_EQ(PythonFloorDiv(0.6, 0.2), 2.0);                     // 0.6 // 0.2 == 2.0
  EXPECT_EQ(PythonFloorDiv(4.35, 0.05), 86.0);                  // 4.35 // 0.05 == 86.0
  EXPECT_EQ(PythonFloorDiv(0.009, 0.001), 8.0);                 // 0.009 // 0.001 == 8.0  (floor(0.009 / 0.001) == 9)
  EXPECT_EQ(PythonFloorDiv(0.011, 0.001), 10.0);                // 0.011 // 0.001 == 10.0 (floor(0.011 / 0.001) == 11)
  EXPECT_EQ(PythonFloorDiv(0.018, 0.001), 17.0);                // 0.018 // 0.001 == 17.0 (floor(0.018 / 0.001) == 18)
  EXPECT_EQ(PythonFloorDiv(0.050161666, 0.001), 50.0);          // 0.050161666 // 0.001 == 50.0
  EXPECT_EQ(PythonFloorDiv(0.05016166687011708, 0.001), 50.0);  // 0.05016166687011708 // 0.001 == 50.0
  EXPECT_EQ(PythonFloorDiv(0.092953779220581, 0.001), 92.0);    // 0.092953779220581 // 0.001 == 92.0
  EXPECT_EQ(PythonFloorDiv(0.029, 0.001), 29.0);                // 0.029 // 0.001 == 29.0
  EXPECT_EQ(PythonFloorDiv(0.058, 0.001), 58.0);                // 0.058 // 0.001 == 58.0
  EXPECT_EQ(PythonFloorDiv(0.9, 0.3), 3.0);                     // 0.9 // 0.3 == 3.0
  EXPECT_EQ(PythonFloorDiv(1.1, 0.1), 11.0);                    // 1.1 // 0.1 == 11.0
  EXPECT_EQ(PythonFloorDiv(0.1, 0.1), 1.0);                     // 0.1 // 0.1 == 1.0
  EXPECT_EQ(PythonFloorDiv(2.0, 0.5), 4.0);                     // 2.0 // 0.5 == 4.0
}

TEST(PythonFloorDivTest, ZeroAndTinyNumerators) {
  // 0.0 // 0.001 == 0.0 and 1e-300 // 1.0 == 0.0, both +0.0.
  EXPECT_EQ(PythonFloorDiv(0.0, 0.001), 0.0);
  EXPECT_FALSE(std::signbit(PythonFloorDiv(0.0, 0.001)));
  EXPECT_EQ(PythonFloorDiv(1e-300, 1.0), 0.0);
  EXPECT_FALSE(std::signbit(PythonFloorDiv(1e-300, 1.0)));
  // -0.0 // 1.0 == -0.0
  EXPECT_EQ(PythonFloorDiv(-0.0, 1.0), 0.0);
  EXPECT_TRUE(std::signbit(PythonFloorDiv(-0.0, 1.0)));
}

TEST(PythonFloorDivTest, ExactQuotients) {
  for (int i = 0; i < 200; ++i) {
    // Multiples of a power of two divide exactly.
    EXPECT_EQ(PythonFloorDiv(i * 0.25 + 0.125, 0.25), static_cast<double>(i)) << i;
    EXPECT_EQ(PythonFloorDiv(i * 0.25, 0.25), static_cast<double>(i)) << i;
  }
}

// ---------------------------------------------------------------------------------------
// ParetoFilter.

std::vector<int> Freqs(const std::vector<Measurement>& list) {
  std::vector<int> out;
  for (const Measurement& m : list) out.push_back(m.freq_mhz);
  return out;
}

TEST(ParetoFilterTest, StrictDropsOnlyStrictlyDominated) {
  const std::vector<Measurement> ms = {
      {1410, 1.0, 10.0}, {1300, 2.0, 5.0}, {1200, 3.0, 6.0},  // B (2 s, 5 J) is strictly faster and cheaper: dropped
      {1100, 2.0, 10.0},                                      // ties A in energy, B in time: not strictly dominated
      {1000, 4.0, 5.0},                                       // ties B in energy: kept
      {900, 5.0, 4.0},
  };
  EXPECT_EQ(Freqs(ParetoFilter(ms, 1.0)), (std::vector<int>{1410, 1300, 1100, 1000, 900}));
}

TEST(ParetoFilterTest, SoftFilterKeepsNearFrontierPoints) {
  const std::vector<Measurement> ms = {
      {1410, 2.0, 10.0}, {1300, 2.5, 8.0},
      {1200, 3.0, 7.0},  {1100, 3.1, 7.2},  // strictly dominated by 1200; soft: 7 < 7.2 * 0.95 = 6.84 fails, kept
      {1000, 4.0, 9.0},                     // soft: 1300 has 2.5 < 3.8 and 8 < 8.55: dropped
  };
  EXPECT_EQ(Freqs(ParetoFilter(ms, 1.0)), (std::vector<int>{1410, 1300, 1200}));
  EXPECT_EQ(Freqs(ParetoFilter(ms, 0.95)), (std::vector<int>{1410, 1300, 1200, 1100}));
  // With a smaller factor even 1000 survives: 2.0 < 2.0 (1410 vs 4.0 * 0.5) fails, and
  // 1300/1200 fail on energy (8 < 4.5 and 7 < 4.5 are false).
  EXPECT_EQ(Freqs(ParetoFilter(ms, 0.5)), (std::vector<int>{1410, 1300, 1200, 1100, 1000}));
}

TEST(ParetoFilterTest, EmptyInput) { EXPECT_TRUE(ParetoFilter({}, 1.0).empty()); }

// The pairwise definition ParetoFilter had before it was made O(n log n): the oracle.
std::vector<Measurement> QuadraticParetoFilter(const std::vector<Measurement>& measurements, double noise_factor) {
  std::vector<Measurement> kept;
  for (const Measurement& m : measurements) {
    bool dominated = false;
    for (const Measurement& other : measurements) {
      if (other.time_s < m.time_s * noise_factor && other.energy_j < m.energy_j * noise_factor) {
        dominated = true;
        break;
      }
    }
    if (!dominated) kept.push_back(m);
  }
  return kept;
}

// Same measurements kept, in the same order, as the pairwise definition: random lists
// with repeated times and energies, ties, zeros, infinities and NaNs, strict and soft.
TEST(ParetoFilterTest, SameAsPairwiseDefinitionOnRandomInputs) {
  std::mt19937 rng(18);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> specials = {0.0, -0.0, 1.0, 2.0, inf, -inf, nan, 1e-300, -1.0};
  std::uniform_int_distribution<int> size(0, 60), pick(0, 9), small(0, 6);
  std::uniform_real_distribution<double> value(0.0, 5.0);
  auto draw = [&] {
    const int k = pick(rng);
    if (k < static_cast<int>(specials.size()) && std::bernoulli_distribution(0.15)(rng)) return specials[k];
    if (std::bernoulli_distribution(0.4)(rng)) return static_cast<double>(small(rng));  // many ties
    return value(rng);
  };
  int compared = 0, dropped = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<Measurement> ms(static_cast<size_t>(size(rng)));
    for (size_t i = 0; i < ms.size(); ++i) ms[i] = {static_cast<int>(i), draw(), draw()};
    for (double noise_factor : {1.0, 0.95, 0.5, 1e-9}) {
      const std::vector<Measurement> fast = ParetoFilter(ms, noise_factor);
      const std::vector<Measurement> oracle = QuadraticParetoFilter(ms, noise_factor);
      ASSERT_EQ(Freqs(fast), Freqs(oracle)) << "trial " << trial << ", noise factor " << noise_factor;
      dropped += static_cast<int>(ms.size() - fast.size());
      ++compared;
    }
  }
  EXPECT_EQ(compared, 3000 * 4);
  EXPECT_GT(dropped, 10000);  // the inputs exercise domination, not only keeping everything
}

// ---------------------------------------------------------------------------------------
// BuildOperationOptions.

std::vector<int64_t> Durations(const OperationOptions& o) {
  std::vector<int64_t> out;
  for (const OperationOption& opt : o.options) out.push_back(opt.duration_units);
  return out;
}

TEST(OperationOptionsTest, SoftRetryWhenThreeOrFewerSurvive) {
  // Unit 0.25 s: every time below divides exactly.
  const std::vector<Measurement> ms = {
      {1410, 2.0, 10.0},  // q 8
      {1300, 2.5, 8.0},   // q 10
      {1200, 3.0, 7.0},   // q 12
      {1100, 3.25, 7.2},  // q 13; strictly dominated by 1200, soft: 7 < 6.84 fails -> kept
      {1000, 4.0, 9.0},   // dominated in both
  };
  Result<OperationOptions> soft = BuildOperationOptions(ms, 0.25, 0.95, 0.0);
  ASSERT_TRUE(soft.ok()) << soft.error().message;
  EXPECT_TRUE(soft->used_soft_filter);
  EXPECT_EQ(Durations(*soft), (std::vector<int64_t>{8, 10, 12, 13}));
  EXPECT_EQ(soft->options[3].freq_mhz, 1100);

  // noise_factor 1 means no soft retry.
  Result<OperationOptions> strict = BuildOperationOptions(ms, 0.25, 1.0, 0.0);
  ASSERT_TRUE(strict.ok()) << strict.error().message;
  EXPECT_FALSE(strict->used_soft_filter);
  EXPECT_EQ(Durations(*strict), (std::vector<int64_t>{8, 10, 12}));
}

TEST(OperationOptionsTest, NoSoftRetryWhenFourSurvive) {
  const std::vector<Measurement> ms = {
      {1410, 2.0, 10.0},  // q 8
      {1300, 2.5, 8.0},   // q 10
      {1200, 3.0, 7.0},   // q 12
      {1150, 3.5, 6.5},   // q 14
      {1100, 3.25, 7.2},  // strictly dominated by 1200 (would survive the soft filter)
  };
  Result<OperationOptions> result = BuildOperationOptions(ms, 0.25, 0.95, 0.0);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_FALSE(result->used_soft_filter);
  EXPECT_EQ(Durations(*result), (std::vector<int64_t>{8, 10, 12, 14}));
}

TEST(OperationOptionsTest, QuantisationKeepsLargestEnergyPerDuration) {
  // 0.25 s units: 2.0 and 2.125 both fall in q 8, 2.5 and 2.625 in q 10; all are on the
  // strict frontier (each slower one is cheaper).
  const std::vector<Measurement> ms = {
      {1410, 2.0, 10.0}, {1395, 2.125, 9.5}, {1380, 2.5, 9.0}, {1365, 2.625, 8.5}, {1350, 3.0, 8.0},
  };
  Result<OperationOptions> result = BuildOperationOptions(ms, 0.25, 1.0, 0.0);
  ASSERT_TRUE(result.ok()) << result.error().message;
  ASSERT_EQ(Durations(*result), (std::vector<int64_t>{8, 10, 12}));
  EXPECT_EQ(result->options[0].freq_mhz, 1410);
  EXPECT_DOUBLE_EQ(result->options[0].energy_j, 10.0);
  EXPECT_DOUBLE_EQ(result->options[0].time_s, 2.0);
  EXPECT_EQ(result->options[1].freq_mhz, 1380);
  EXPECT_DOUBLE_EQ(result->options[1].energy_j, 9.0);
  EXPECT_EQ(result->options[2].freq_mhz, 1350);

  // Same, with the larger energy listed second.
  const std::vector<Measurement> reversed = {
      {1395, 2.125, 9.5}, {1410, 2.0, 10.0}, {1350, 3.0, 8.0}, {1365, 2.625, 8.5}, {1380, 2.5, 9.0},
  };
  Result<OperationOptions> again = BuildOperationOptions(reversed, 0.25, 1.0, 0.0);
  ASSERT_TRUE(again.ok()) << again.error().message;
  ASSERT_EQ(Durations(*again), (std::vector<int64_t>{8, 10, 12}));
  EXPECT_EQ(again->options[0].freq_mhz, 1410);
  EXPECT_EQ(again->options[1].freq_mhz, 1380);
}

TEST(OperationOptionsTest, EffectiveCostSubtractsP2pEnergy) {
  const std::vector<Measurement> ms = {
      {1410, 2.0, 500.0},
      {1300, 2.5, 450.0},
      {1200, 3.0, 420.0},
      {1100, 3.5, 410.0},
  };
  Result<OperationOptions> result = BuildOperationOptions(ms, 0.25, 0.95, 80.0);
  ASSERT_TRUE(result.ok()) << result.error().message;
  ASSERT_EQ(Durations(*result), (std::vector<int64_t>{8, 10, 12, 14}));
  // cost = energy - 80 W * q * 0.25 s
  EXPECT_DOUBLE_EQ(result->options[0].cost_j, 500.0 - 160.0);
  EXPECT_DOUBLE_EQ(result->options[1].cost_j, 450.0 - 200.0);
  EXPECT_DOUBLE_EQ(result->options[2].cost_j, 420.0 - 240.0);
  EXPECT_DOUBLE_EQ(result->options[3].cost_j, 410.0 - 280.0);
  // The measured values are kept alongside.
  EXPECT_DOUBLE_EQ(result->options[3].energy_j, 410.0);
  EXPECT_DOUBLE_EQ(result->options[3].time_s, 3.5);
  EXPECT_EQ(result->options[3].freq_mhz, 1100);
}

TEST(OperationOptionsTest, UsesQuantisedNotMeasuredTimeInCost) {
  // 0.05016166687011708 // 0.001 == 50.0 ; cost = 23.8 - 100 * 50 * 0.001 = 18.8
  const std::vector<Measurement> ms = {{1410, 0.05016166687011708, 23.8}};
  Result<OperationOptions> result = BuildOperationOptions(ms, 0.001, 0.95, 100.0);
  ASSERT_TRUE(result.ok()) << result.error().message;
  ASSERT_EQ(result->options.size(), 1u);
  EXPECT_EQ(result->options[0].duration_units, 50);
  EXPECT_DOUBLE_EQ(result->options[0].cost_j, 23.8 - 100.0 * 50 * 0.001);
}

TEST(OperationOptionsTest, QuantisesLikePythonFloorDivision) {
  // 1.0 // 0.1 == 9.0 (floor(1.0 / 0.1) would give 10); 0.009 // 0.001 == 8.0.
  Result<OperationOptions> a = BuildOperationOptions({{1410, 1.0, 5.0}}, 0.1, 1.0, 0.0);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->options[0].duration_units, 9);
  Result<OperationOptions> b = BuildOperationOptions({{1410, 0.009, 5.0}}, 0.001, 1.0, 0.0);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->options[0].duration_units, 8);
}

TEST(OperationOptionsTest, OptionsSortedFastestFirst) {
  const std::vector<Measurement> ms = {
      {900, 5.0, 4.0}, {1410, 2.0, 10.0}, {1100, 3.5, 6.0}, {1300, 2.5, 8.0}, {1000, 4.25, 5.0},
  };
  Result<OperationOptions> result = BuildOperationOptions(ms, 0.25, 0.95, 0.0);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(Durations(*result), (std::vector<int64_t>{8, 10, 14, 17, 20}));
  std::vector<int> freqs;
  for (const OperationOption& o : result->options) freqs.push_back(o.freq_mhz);
  EXPECT_EQ(freqs, (std::vector<int>{1410, 1300, 1100, 1000, 900}));
}

TEST(OperationOptionsTest, RejectsBadArguments) {
  const std::vector<Measurement> ms = {{1410, 2.0, 10.0}};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double unit : {0.0, -0.001, nan, inf}) {
    Result<OperationOptions> r = BuildOperationOptions(ms, unit, 0.95, 80.0);
    ASSERT_FALSE(r.ok()) << unit;
    EXPECT_EQ(r.error().message, "unit time must be a positive number of seconds") << unit;
  }
  for (double nf : {0.0, -0.5, 1.0000001, 2.0, nan}) {
    Result<OperationOptions> r = BuildOperationOptions(ms, 0.001, nf, 80.0);
    ASSERT_FALSE(r.ok()) << nf;
    EXPECT_EQ(r.error().message, "noise factor must be in (0, 1]") << nf;
  }
  Result<OperationOptions> empty = BuildOperationOptions({}, 0.001, 0.95, 80.0);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message, "no measurements");
  // The bounds themselves are fine.
  EXPECT_TRUE(BuildOperationOptions(ms, 1e-9, 1.0, 80.0).ok());
  EXPECT_TRUE(BuildOperationOptions(ms, 0.001, 1e-9, 80.0).ok());
}

// Durations are integers in [1, 2^53]: a time below the unit time once became 0 units (a
// one-point frontier at 0 s), a time of 1e308 -9223372036854775808 units.
TEST(OperationOptionsTest, RejectsDurationsThatRoundToZeroOrOverflow) {
  const std::vector<Measurement> below = {{1410, 0.0005, 10.0}, {1200, 0.002, 8.0}};
  Result<OperationOptions> zero = BuildOperationOptions(below, 0.001, 1.0, 0.0);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message,
            "the time at 1410 MHz (0.0005 s) is shorter than one unit time (0.001 s) and would take 0 units: use a "
            "unit time of at most 0.0005 s");
  const std::vector<Measurement> huge = {{1410, 1e308, 1.0}};
  for (double unit : {0.001, 1e-300}) {
    Result<OperationOptions> overflow = BuildOperationOptions(huge, unit, 1.0, 0.0);
    ASSERT_FALSE(overflow.ok()) << unit;
    EXPECT_NE(overflow.error().message.find("more than the 2^53 a duration may have: use a coarser unit time"),
              std::string::npos)
        << overflow.error().message;
  }
  // 2^53 units exactly is a duration; one more unit time is not.
  const double unit = 1.0 / 1024;  // a power of two: exact quotients
  const double limit_s = static_cast<double>(kMaxDurationUnits) * unit;
  Result<OperationOptions> at_limit = BuildOperationOptions({{1410, limit_s, 1.0}}, unit, 1.0, 0.0);
  ASSERT_TRUE(at_limit.ok()) << at_limit.error().message;
  EXPECT_EQ(at_limit->options[0].duration_units, kMaxDurationUnits);
  EXPECT_FALSE(BuildOperationOptions({{1410, 2 * limit_s, 1.0}}, unit, 1.0, 0.0).ok());
}

TEST(OperationOptionsTest, RejectsNonFiniteMeasurementsAndCosts) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double t : {0.0, -1.0, nan, inf}) {
    Result<OperationOptions> r = BuildOperationOptions({{1410, 0.05, 10.0}, {1200, t, 5.0}}, 0.001, 1.0, 0.0);
    ASSERT_FALSE(r.ok()) << t;
    EXPECT_EQ(r.error().message.rfind("the time at 1200 MHz must be a finite number of seconds > 0, got ", 0), 0u)
        << r.error().message;
  }
  for (double e : {-1.0, nan, inf}) {
    Result<OperationOptions> r = BuildOperationOptions({{1410, 0.05, e}}, 0.001, 1.0, 0.0);
    ASSERT_FALSE(r.ok()) << e;
    EXPECT_EQ(r.error().message.rfind("the energy at 1410 MHz must be a finite number of joules >= 0, got ", 0), 0u)
        << r.error().message;
  }
  // Blocking power so large that the effective energy is -inf.
  Result<OperationOptions> cost = BuildOperationOptions({{1410, 0.05, 10.0}}, 0.001, 1.0, 1e308);
  ASSERT_FALSE(cost.ok());
  EXPECT_EQ(cost.error().message,
            "the effective energy at 1410 MHz (10 J less 1e+308 W of blocking power over 0.05 s) is not a finite "
            "number");
}

}  // namespace
}  // namespace wattcut
