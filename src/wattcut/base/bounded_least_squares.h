// Least squares with each unknown inside bounds: minimise sum_k w_k (x . a_k - y_k)^2 subject to
// lower_i <= x_i <= upper_i, for a handful of unknowns (a calibration's power levels).
//
// The problem is a convex quadratic program in the normal equations (A'WA, A'Wy), solved by
// cyclic coordinate descent with each coordinate projected onto its bounds, from the clipped
// unconstrained answer, until no coordinate moves more than `tolerance` of its range. For the
// few well-scaled unknowns it is used for, this is exact to that tolerance and simpler than an
// active-set method (Lawson-Hanson's BVLS), which no Debian package offers for C++; the test
// checks it against every active set enumerated.
#pragma once

#include <vector>

namespace wattcut {

class BoundedLeastSquares {
 public:
  explicit BoundedLeastSquares(int unknowns);

  // One observation: row `a` (size `unknowns`), target `y`, weight `w` >= 0.
  void Add(const double* a, double y, double w = 1.0);

  struct Answer {
    std::vector<double> x;
    std::vector<bool> at_bound;          // x_i is at lower_i or upper_i (and the data would pull it beyond)
    double residual_sum_of_squares = 0;  // weighted
  };
  // Empty x when the bounds are inconsistent (a lower above its upper) or not finite.
  Answer Solve(const std::vector<double>& lower, const std::vector<double>& upper, double tolerance = 1e-10,
               int max_sweeps = 20000) const;

  int observations() const { return observations_; }

 private:
  int n_;
  int observations_ = 0;
  std::vector<double> ata_;  // n x n, row-major
  std::vector<double> aty_;
  double yy_ = 0;
};

}  // namespace wattcut
