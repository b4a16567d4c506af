#include "wattcut/base/bounded_least_squares.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace wattcut {
namespace {

// The exact answer by enumeration: every unknown free, at its lower or at its upper bound (3^n
// cases); each case's free unknowns solve their normal equations; the best feasible one wins.
double BruteForceRss(const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                     const std::vector<double>& lo, const std::vector<double>& hi) {
  const int n = static_cast<int>(lo.size());
  int cases = 1;
  for (int i = 0; i < n; ++i) cases *= 3;
  double best = std::numeric_limits<double>::infinity();
  for (int c = 0; c < cases; ++c) {
    std::vector<int> state(n);
    for (int i = 0, k = c; i < n; ++i, k /= 3) state[i] = k % 3;
    std::vector<int> free;
    std::vector<double> x(n);
    for (int i = 0; i < n; ++i) {
      if (state[i] == 1) x[i] = lo[i];
      if (state[i] == 2) x[i] = hi[i];
      if (state[i] == 0) free.push_back(i);
    }
    const int m = static_cast<int>(free.size());
    std::vector<std::vector<double>> a(m, std::vector<double>(m + 1, 0.0));
    for (size_t k = 0; k < rows.size(); ++k) {
      double fixed = 0;
      for (int i = 0; i < n; ++i) {
        if (state[i] != 0) fixed += rows[k][i] * x[i];
      }
      for (int p = 0; p < m; ++p) {
        for (int q = 0; q < m; ++q) a[p][q] += rows[k][free[p]] * rows[k][free[q]];
        a[p][m] += rows[k][free[p]] * (y[k] - fixed);
      }
    }
    bool singular = false;
    for (int p = 0; p < m && !singular; ++p) {
      int pivot = p;
      for (int r = p + 1; r < m; ++r) {
        if (std::abs(a[r][p]) > std::abs(a[pivot][p])) pivot = r;
      }
      std::swap(a[p], a[pivot]);
      if (std::abs(a[p][p]) < 1e-12) {
        singular = true;
        break;
      }
      for (int r = 0; r < m; ++r) {
        if (r == p) continue;
        const double f = a[r][p] / a[p][p];
        for (int q = p; q <= m; ++q) a[r][q] -= f * a[p][q];
      }
    }
    if (singular) continue;
    bool feasible = true;
    for (int p = 0; p < m; ++p) {
      x[free[p]] = a[p][m] / a[p][p];
      if (x[free[p]] < lo[free[p]] - 1e-12 || x[free[p]] > hi[free[p]] + 1e-12) feasible = false;
    }
    if (!feasible) continue;
    double rss = 0;
    for (size_t k = 0; k < rows.size(); ++k) {
      double e = -y[k];
      for (int i = 0; i < n; ++i) e += rows[k][i] * x[i];
      rss += e * e;
    }
    best = std::min(best, rss);
  }
  return best;
}

TEST(BoundedLeastSquares, MatchesEveryActiveSetEnumerated) {
  std::mt19937_64 rng(52);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + trial % 5;
    const int count = n + 3 + trial % 17;
    std::vector<std::vector<double>> rows(count, std::vector<double>(n));
    std::vector<double> y(count);
    BoundedLeastSquares ls(n);
    for (int k = 0; k < count; ++k) {
      for (int i = 0; i < n; ++i) rows[k][i] = u(rng) < 0.3 ? 0.0 : u(rng) * 3;
      y[k] = (u(rng) - 0.3) * 10;
      ls.Add(rows[k].data(), y[k]);
    }
    std::vector<double> lo(n), hi(n);
    for (int i = 0; i < n; ++i) {
      lo[i] = u(rng) * 2 - 1;
      hi[i] = lo[i] + u(rng) * 3;
    }
    const BoundedLeastSquares::Answer a = ls.Solve(lo, hi);
    ASSERT_EQ(a.x.size(), static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      EXPECT_GE(a.x[i], lo[i]);
      EXPECT_LE(a.x[i], hi[i]);
    }
    const double brute = BruteForceRss(rows, y, lo, hi);
    if (std::isfinite(brute)) {
      EXPECT_NEAR(a.residual_sum_of_squares, brute, 1e-6 * std::max(1.0, brute)) << "trial " << trial;
    }
  }
}

TEST(BoundedLeastSquares, SaysWhichBoundBindsAndRefusesInconsistentBounds) {
  BoundedLeastSquares ls(2);
  for (int k = 0; k < 10; ++k) {
    const double a[2] = {1.0, static_cast<double>(k)};
    ls.Add(a, 50.0 - 2.0 * k);  // slope -2: held at its lower bound 0; the mean, 41, is inside
  }
  const BoundedLeastSquares::Answer a = ls.Solve({0, 0}, {100, 100});
  ASSERT_EQ(a.x.size(), 2u);
  EXPECT_DOUBLE_EQ(a.x[1], 0);
  EXPECT_TRUE(a.at_bound[1]);
  EXPECT_FALSE(a.at_bound[0]);
  EXPECT_NEAR(a.x[0], 41, 1e-6);
  EXPECT_TRUE(ls.Solve({1, 0}, {0, 1}).x.empty());
  EXPECT_TRUE(ls.Solve({0, 0}, {std::numeric_limits<double>::infinity(), 1}).x.empty());
}

}  // namespace
}  // namespace wattcut
