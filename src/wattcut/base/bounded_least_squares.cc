#include "wattcut/base/bounded_least_squares.h"

#include <algorithm>
#include <cmath>

namespace wattcut {
namespace {

// The unconstrained answer of A x = b (n x n, row-major) by Gaussian elimination with partial
// pivoting; false when A is singular.
bool SolveUnconstrained(std::vector<double> a, std::vector<double> b, int n, std::vector<double>& x) {
  double scale = 0;
  for (int i = 0; i < n; ++i) scale = std::max(scale, std::abs(a[static_cast<size_t>(i * n + i)]));
  if (scale <= 0) return false;
  auto at = [&](int r, int c) -> double& { return a[static_cast<size_t>(r * n + c)]; };
  for (int c = 0; c < n; ++c) {
    int pivot = c;
    for (int r = c + 1; r < n; ++r) {
      if (std::abs(at(r, c)) > std::abs(at(pivot, c))) pivot = r;
    }
    if (std::abs(at(pivot, c)) < 1e-12 * scale) return false;
    for (int k = 0; k < n; ++k) std::swap(at(c, k), at(pivot, k));
    std::swap(b[static_cast<size_t>(c)], b[static_cast<size_t>(pivot)]);
    for (int r = c + 1; r < n; ++r) {
      const double m = at(r, c) / at(c, c);
      for (int k = c; k < n; ++k) at(r, k) -= m * at(c, k);
      b[static_cast<size_t>(r)] -= m * b[static_cast<size_t>(c)];
    }
  }
  x.assign(static_cast<size_t>(n), 0.0);
  for (int r = n - 1; r >= 0; --r) {
    double s = b[static_cast<size_t>(r)];
    for (int k = r + 1; k < n; ++k) s -= at(r, k) * x[static_cast<size_t>(k)];
    x[static_cast<size_t>(r)] = s / at(r, r);
  }
  return true;
}

}  // namespace

BoundedLeastSquares::BoundedLeastSquares(int unknowns)
    : n_(unknowns), ata_(static_cast<size_t>(unknowns * unknowns), 0.0), aty_(static_cast<size_t>(unknowns), 0.0) {}

void BoundedLeastSquares::Add(const double* a, double y, double w) {
  if (!(w > 0)) return;
  for (int i = 0; i < n_; ++i) {
    for (int j = 0; j < n_; ++j) ata_[static_cast<size_t>(i * n_ + j)] += w * a[i] * a[j];
    aty_[static_cast<size_t>(i)] += w * a[i] * y;
  }
  yy_ += w * y * y;
  ++observations_;
}

BoundedLeastSquares::Answer BoundedLeastSquares::Solve(const std::vector<double>& lower,
                                                       const std::vector<double>& upper, double tolerance,
                                                       int max_sweeps) const {
  Answer answer;
  if (static_cast<int>(lower.size()) != n_ || static_cast<int>(upper.size()) != n_) return answer;
  for (int i = 0; i < n_; ++i) {
    if (!std::isfinite(lower[i]) || !std::isfinite(upper[i]) || lower[i] > upper[i]) return answer;
  }
  auto at = [&](int i, int j) { return ata_[static_cast<size_t>(i * n_ + j)]; };
  // The unconstrained answer when it lies within the bounds (exact); else coordinate descent from
  // it, clipped (or from the middle of the box when A is singular).
  std::vector<double> x;
  bool inside = SolveUnconstrained(ata_, aty_, n_, x);
  if (!inside) x.assign(static_cast<size_t>(n_), 0.0);
  for (int i = 0; i < n_; ++i) {
    if (!std::isfinite(x[i]) || x[i] < lower[i] || x[i] > upper[i]) inside = false;
    x[i] = std::isfinite(x[i]) ? std::clamp(x[i], lower[i], upper[i]) : (lower[i] + upper[i]) / 2;
  }
  for (int sweep = 0; !inside && sweep < max_sweeps; ++sweep) {
    double largest_move = 0;
    for (int i = 0; i < n_; ++i) {
      const double range = std::max(upper[i] - lower[i], 1e-300);
      double next = x[i];
      if (at(i, i) > 0) {
        double r = aty_[i];
        for (int j = 0; j < n_; ++j) {
          if (j != i) r -= at(i, j) * x[j];
        }
        next = std::clamp(r / at(i, i), lower[i], upper[i]);
      }
      // An unknown the data never touches stays where it is (within its bounds).
      largest_move = std::max(largest_move, std::abs(next - x[i]) / range);
      x[i] = next;
    }
    if (largest_move <= tolerance) break;
  }
  answer.x = x;
  answer.at_bound.assign(static_cast<size_t>(n_), false);
  double xax = 0, xb = 0;
  for (int i = 0; i < n_; ++i) {
    double gradient = -aty_[i];  // of 0.5 x'Ax - x'b
    for (int j = 0; j < n_; ++j) {
      gradient += at(i, j) * x[j];
      xax += x[i] * at(i, j) * x[j];
    }
    xb += x[i] * aty_[i];
    const double scale = std::max({std::abs(aty_[i]), at(i, i) * std::max(std::abs(x[i]), 1.0), 1e-300});
    answer.at_bound[i] =
        (x[i] <= lower[i] && gradient > 1e-9 * scale) || (x[i] >= upper[i] && gradient < -1e-9 * scale);
  }
  answer.residual_sum_of_squares = std::max(0.0, yy_ - 2 * xb + xax);
  return answer;
}

}  // namespace wattcut
