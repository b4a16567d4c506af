#include "wattcut/profile/cost_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "wattcut/base/shared_data_testing.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut {
namespace {

OperationOption Opt(int64_t q, double cost) {
  OperationOption o;
  o.duration_units = q;
  o.cost_j = cost;
  return o;
}

OperationOptions Options(const std::vector<OperationOption>& list) {
  OperationOptions o;
  o.options = list;
  return o;
}

// Samples of a * exp(b * (q - q0)) + c at the given durations.
std::vector<OperationOption> ExpSamples(double a, double b, double c, const std::vector<int64_t>& qs) {
  std::vector<OperationOption> out;
  for (int64_t q : qs) out.push_back(Opt(q, a * std::exp(b * static_cast<double>(q - qs.front())) + c));
  return out;
}

void ExpectRelNear(double actual, double expected, double rel, const std::string& what) {
  EXPECT_LE(std::fabs(actual - expected), rel * std::fabs(expected))
      << what << ": got " << actual << ", expected " << expected;
}

// The solver's requirements on a table: convex and non-increasing.
void ExpectConvexNonIncreasing(const CostTable& table, const std::string& what) {
  ASSERT_EQ(table.cost_j.size(), static_cast<size_t>(table.max_duration - table.min_duration + 1)) << what;
  for (size_t i = 1; i < table.cost_j.size(); ++i) {
    EXPECT_LE(table.cost_j[i] - table.cost_j[i - 1], 1e-12) << what << " at index " << i;
  }
  for (size_t i = 2; i < table.cost_j.size(); ++i) {
    EXPECT_GE(table.cost_j[i] - 2 * table.cost_j[i - 1] + table.cost_j[i - 2], -1e-12) << what << " at index " << i;
  }
}

// ---------------------------------------------------------------------------------------
// Names.

TEST(CostModelTest, ParsesNamesAndRejectsOthers) {
  Result<CostModelKind> exp = ParseCostModel("exponential");
  ASSERT_TRUE(exp.ok());
  EXPECT_EQ(*exp, CostModelKind::kExponential);
  Result<CostModelKind> hull = ParseCostModel("convex-hull");
  ASSERT_TRUE(hull.ok());
  EXPECT_EQ(*hull, CostModelKind::kConvexHull);
  for (CostModelKind kind : {CostModelKind::kExponential, CostModelKind::kConvexHull}) {
    Result<CostModelKind> round = ParseCostModel(CostModelName(kind));
    ASSERT_TRUE(round.ok());
    EXPECT_EQ(*round, kind);
  }
  EXPECT_EQ(CostModelName(CostModelKind::kExponential), "exponential");
  EXPECT_EQ(CostModelName(CostModelKind::kConvexHull), "convex-hull");

  for (const char* bad : {"hull", "Exponential", "convex_hull", ""}) {
    Result<CostModelKind> r = ParseCostModel(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message, "unknown cost model '" + std::string(bad) + "' (expected exponential or convex-hull)");
  }
}

// ---------------------------------------------------------------------------------------
// FitExponential.

TEST(CostModelTest, FitExponentialRecoversExactParameters) {
  struct Case {
    double a, b, c;
    std::vector<int64_t> qs;
  };
  const std::vector<Case> cases = {
      {50.0, -0.1, -20.0, {10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 25, 30, 35, 40}},
      {50.0, -0.1, -20.0, {10, 12, 15, 20, 28, 40}},  // uneven spacing
      {3.5, -0.02, 120.0, {50, 55, 60, 70, 80, 90, 100, 120, 150}},
      {400.0, -0.8, 5.0, {92, 93, 94, 96, 99}},
  };
  for (const Case& c : cases) {
    std::vector<OperationOption> options = ExpSamples(c.a, c.b, c.c, c.qs);
    ExponentialFit fit = FitExponential(options);
    const std::string what = "a=" + std::to_string(c.a) + " b=" + std::to_string(c.b);
    EXPECT_EQ(fit.q0, c.qs.front()) << what;
    ExpectRelNear(fit.a, c.a, 1e-6, what + " a");
    ExpectRelNear(fit.b, c.b, 1e-6, what + " b");
    ExpectRelNear(fit.c, c.c, 1e-6, what + " c");
    EXPECT_LT(fit.rms_error_j, 1e-6 * c.a) << what;
  }
}

TEST(CostModelTest, FitExponentialEnforcesNonNegativeAOnIncreasingConcaveData) {
  // sqrt is increasing and concave; the unconstrained best a would be negative. With
  // a >= 0 the best model is the constant mean.
  std::vector<OperationOption> options;
  double sum = 0;
  for (int64_t q = 20; q <= 30; ++q) {
    double y = 10.0 * std::sqrt(static_cast<double>(q - 19));
    options.push_back(Opt(q, y));
    sum += y;
  }
  const double mean = sum / static_cast<double>(options.size());
  ExponentialFit fit = FitExponential(options);
  EXPECT_EQ(fit.a, 0.0);
  EXPECT_NEAR(fit.c, mean, 1e-9);
  EXPECT_LT(fit.b, 0.0);
  double sse = 0;
  for (const OperationOption& o : options) sse += (o.cost_j - mean) * (o.cost_j - mean);
  EXPECT_NEAR(fit.rms_error_j, std::sqrt(sse / static_cast<double>(options.size())), 1e-9);
}

TEST(CostModelTest, FitExponentialEnforcesNonNegativeAOnDecreasingConcaveData) {
  // 100 - (q - 10)^2: decreasing and concave. The fit must stay convex (a >= 0, b < 0).
  std::vector<OperationOption> options;
  for (int64_t q = 10; q <= 20; ++q) options.push_back(Opt(q, 100.0 - static_cast<double>((q - 10) * (q - 10))));
  ExponentialFit fit = FitExponential(options);
  EXPECT_GE(fit.a, 0.0);
  EXPECT_LT(fit.b, 0.0);
  CostTable table = BuildCostTable(Options(options), CostModelKind::kExponential);
  ExpectConvexNonIncreasing(table, "concave data");
}

// ---------------------------------------------------------------------------------------
// BuildCostTable, exponential.

TEST(CostModelTest, ExponentialTableMatchesSamplesAndIsConvexNonIncreasing) {
  const std::vector<int64_t> qs = {10, 12, 15, 20, 30};
  OperationOptions options = Options(ExpSamples(60.0, -0.15, -30.0, qs));
  CostTable table = BuildCostTable(options, CostModelKind::kExponential);
  EXPECT_EQ(table.min_duration, 10);
  EXPECT_EQ(table.max_duration, 30);  // strictly decreasing: the slowest option is cheapest
  ASSERT_EQ(table.cost_j.size(), 21u);
  for (const OperationOption& o : options.options) {
    EXPECT_NEAR(table.at(o.duration_units), o.cost_j, 1e-6 * 60.0) << "q " << o.duration_units;
  }
  // Between the samples it follows the exponential too.
  for (int64_t q = 10; q <= 30; ++q) {
    EXPECT_NEAR(table.at(q), 60.0 * std::exp(-0.15 * static_cast<double>(q - 10)) - 30.0, 1e-6 * 60.0) << q;
  }
  ExpectConvexNonIncreasing(table, "exponential");
}

TEST(CostModelTest, ExponentialFallsBackToConvexHullBelowThreeOptions) {
  OperationOptions two = Options({Opt(10, 100.0), Opt(20, 50.0)});
  CostTable exp = BuildCostTable(two, CostModelKind::kExponential);
  CostTable hull = BuildCostTable(two, CostModelKind::kConvexHull);
  EXPECT_EQ(exp.min_duration, 10);
  EXPECT_EQ(exp.max_duration, 20);
  EXPECT_EQ(exp.cost_j, hull.cost_j);
  // The straight line between the two points.
  for (int64_t q = 10; q <= 20; ++q) EXPECT_DOUBLE_EQ(exp.at(q), 100.0 - 5.0 * static_cast<double>(q - 10)) << q;

  OperationOptions one = Options({Opt(42, 7.5)});
  for (CostModelKind kind : {CostModelKind::kExponential, CostModelKind::kConvexHull}) {
    CostTable t = BuildCostTable(one, kind);
    EXPECT_EQ(t.min_duration, 42);
    EXPECT_EQ(t.max_duration, 42);
    ASSERT_EQ(t.cost_j.size(), 1u);
    EXPECT_EQ(t.at(42), 7.5);
  }

  // Two options where the slower costs more: only the fastest remains.
  OperationOptions rising = Options({Opt(10, 50.0), Opt(20, 60.0)});
  CostTable r = BuildCostTable(rising, CostModelKind::kExponential);
  EXPECT_EQ(r.min_duration, 10);
  EXPECT_EQ(r.max_duration, 10);
  EXPECT_EQ(r.cost_j, std::vector<double>{50.0});
}

// ---------------------------------------------------------------------------------------
// BuildCostTable, convex hull.

TEST(CostModelTest, ConvexHullTableByHand) {
  // Points: A(10,100) B(12,80) C(14,75) D(16,60) E(20,50) F(25,52).
  // Lower hull A-B-D-E-F (C lies above B-D: 70 < 75); slopes -10, -5, -2.5, +0.4.
  // Least cost at E (q 20): the table stops there.
  OperationOptions options = Options({Opt(10, 100), Opt(12, 80), Opt(14, 75), Opt(16, 60), Opt(20, 50), Opt(25, 52)});
  CostTable table = BuildCostTable(options, CostModelKind::kConvexHull);
  EXPECT_EQ(table.min_duration, 10);
  EXPECT_EQ(table.max_duration, 20);
  const std::vector<double> expected = {100, 90, 80, 75, 70, 65, 60, 57.5, 55, 52.5, 50};
  ASSERT_EQ(table.cost_j.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_DOUBLE_EQ(table.cost_j[i], expected[i]) << "q " << 10 + i;
  // Through the hull vertices, below the option that is not one.
  EXPECT_EQ(table.at(10), 100.0);
  EXPECT_EQ(table.at(12), 80.0);
  EXPECT_EQ(table.at(16), 60.0);
  EXPECT_EQ(table.at(20), 50.0);
  EXPECT_LT(table.at(14), 75.0);
  ExpectConvexNonIncreasing(table, "hull by hand");
}

TEST(CostModelTest, ConvexHullDropsCollinearMiddlePointAndKeepsValues) {
  OperationOptions options = Options({Opt(0, 30), Opt(1, 20), Opt(2, 10), Opt(4, 6)});
  CostTable table = BuildCostTable(options, CostModelKind::kConvexHull);
  EXPECT_EQ(table.min_duration, 0);
  EXPECT_EQ(table.max_duration, 4);
  EXPECT_EQ(table.cost_j, (std::vector<double>{30, 20, 10, 8, 6}));
}

TEST(CostModelTest, CutsAtLargestDurationOfLeastCost) {
  // Flat tail from q 15 to q 20: the range runs to 20, the largest duration of least cost.
  OperationOptions options = Options({Opt(10, 100), Opt(15, 50), Opt(20, 50)});
  CostTable hull = BuildCostTable(options, CostModelKind::kConvexHull);
  EXPECT_EQ(hull.min_duration, 10);
  EXPECT_EQ(hull.max_duration, 20);
  ASSERT_EQ(hull.cost_j.size(), 11u);
  for (int64_t q = 15; q <= 20; ++q) EXPECT_EQ(hull.at(q), 50.0) << q;
  ExpectConvexNonIncreasing(hull, "flat tail");

  // A minimum in the middle (hull slopes -10, -2.5, +0.75, +7): cut there.
  OperationOptions valley = Options({Opt(5, 40), Opt(6, 30), Opt(8, 25), Opt(12, 28), Opt(13, 35)});
  CostTable hull_valley = BuildCostTable(valley, CostModelKind::kConvexHull);
  EXPECT_EQ(hull_valley.min_duration, 5);
  EXPECT_EQ(hull_valley.max_duration, 8);
  EXPECT_EQ(hull_valley.cost_j, (std::vector<double>{40, 30, 27.5, 25}));
  ExpectConvexNonIncreasing(hull_valley, "valley hull");
  // The exponential model is non-increasing by construction, so it keeps the whole range.
  CostTable exp_valley = BuildCostTable(valley, CostModelKind::kExponential);
  EXPECT_EQ(exp_valley.min_duration, 5);
  EXPECT_EQ(exp_valley.max_duration, 13);
  ExpectConvexNonIncreasing(exp_valley, "valley exponential");
}

// ---------------------------------------------------------------------------------------
// On the Perseus GPT-3 profile.

TEST(CostModelTest, TablesOnPerseusProfileAreConvexNonIncreasing) {
  WATTCUT_REQUIRE_SHARED_FILE(path, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  Result<Profile> profile = ReadProfileCsv(path, 8);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  for (int s = 0; s < profile->num_stages(); ++s) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      Result<OperationOptions> options = BuildOperationOptions(profile->measurements(s, kind), 0.001, 0.95, 83.64);
      ASSERT_TRUE(options.ok()) << options.error().message;
      const auto& opts = options->options;
      for (CostModelKind model : {CostModelKind::kConvexHull, CostModelKind::kExponential}) {
        const std::string what = "stage " + std::to_string(s) + " " + std::string(InstructionName(kind)) + " " +
                                 std::string(CostModelName(model));
        CostTable table = BuildCostTable(*options, model);
        EXPECT_EQ(table.min_duration, opts.front().duration_units) << what;
        EXPECT_LE(table.max_duration, opts.back().duration_units) << what;
        ExpectConvexNonIncreasing(table, what);
        if (model == CostModelKind::kConvexHull) {
          // A lower hull: never above an option, and as cheap as the cheapest option.
          double cheapest = opts.front().cost_j;
          for (const OperationOption& o : opts) {
            cheapest = std::min(cheapest, o.cost_j);
            if (o.duration_units <= table.max_duration) {
              EXPECT_LE(table.at(o.duration_units), o.cost_j + 1e-9) << what << " q " << o.duration_units;
            }
          }
          EXPECT_NEAR(table.cost_j.back(), cheapest, 1e-9) << what;
          EXPECT_EQ(table.at(table.min_duration), opts.front().cost_j) << what;
        }
      }
    }
  }
}

}  // namespace
}  // namespace wattcut
