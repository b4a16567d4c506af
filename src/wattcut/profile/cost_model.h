// Cost models: effective energy as a function of integer duration, over the duration
// range of an operation's options (PERSEUS.md section 3, step 4). The solver needs
// them convex and non-increasing; both models here are, by construction.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/profile/operation_options.h"

namespace wattcut {

enum class CostModelKind {
  kExponential,  // least-squares a*exp(b*q)+c with a >= 0, b < 0, as the reference fits
  kConvexHull,   // lower convex hull of the options (piecewise linear): exact, no fitting
};

std::string_view CostModelName(CostModelKind kind);  // "exponential" / "convex-hull"
Result<CostModelKind> ParseCostModel(std::string_view name);

// A cost model tabulated at every integer duration of [min_duration, max_duration].
struct CostTable {
  int64_t min_duration = 0;
  int64_t max_duration = 0;
  std::vector<double> cost_j;  // cost_j[d - min_duration]

  double at(int64_t duration) const { return cost_j[static_cast<size_t>(duration - min_duration)]; }
};

// Parameters of the exponential fit, for reports: cost(q) = a*exp(b*(q - q0)) + c.
struct ExponentialFit {
  double a = 0, b = 0, c = 0;
  int64_t q0 = 0;
  double rms_error_j = 0;
};

// Least squares by variable projection: for a fixed rate b the best (a, c) solve a 2x2
// linear system, so only b is searched (a log-spaced scan, then golden-section
// refinement). This finds the global least-squares optimum over b without the initial
// guesses a Levenberg-Marquardt fit needs, and never "fails to fit". With a >= 0
// enforced the model is convex; b < 0 makes it decreasing. Needs >= 3 options.
ExponentialFit FitExponential(const std::vector<OperationOption>& options);

// Tabulates the chosen model over the options' duration range. With fewer than 3
// options the exponential model falls back to the convex hull (3 parameters cannot be
// fitted to 2 points). The range's upper end is the largest duration of least cost, so
// the table is non-increasing.
CostTable BuildCostTable(const OperationOptions& options, CostModelKind kind);

}  // namespace wattcut
