#include "wattcut/profile/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "wattcut/base/printable_text.h"

namespace wattcut {

std::string_view CostModelName(CostModelKind kind) {
  return kind == CostModelKind::kExponential ? "exponential" : "convex-hull";
}

Result<CostModelKind> ParseCostModel(std::string_view name) {
  if (name == "exponential") return CostModelKind::kExponential;
  if (name == "convex-hull") return CostModelKind::kConvexHull;
  return Error{"unknown cost model '" + PrintableText(name) + "' (expected exponential or convex-hull)"};
}

namespace {

struct LinearFit {
  double a = 0, c = 0, sse = std::numeric_limits<double>::infinity();
};

// Best (a >= 0, c) for a fixed rate b.
LinearFit FitForRate(const std::vector<double>& x, const std::vector<double>& y, double b) {
  const size_t n = x.size();
  double s_p = 0, s_pp = 0, s_y = 0, s_py = 0;
  for (size_t i = 0; i < n; ++i) {
    double p = std::exp(b * x[i]);
    s_p += p;
    s_pp += p * p;
    s_y += y[i];
    s_py += p * y[i];
  }
  double dn = static_cast<double>(n);
  double det = dn * s_pp - s_p * s_p;
  LinearFit fit;
  if (std::fabs(det) > 1e-300) {
    fit.a = (dn * s_py - s_p * s_y) / det;
    fit.c = (s_y - fit.a * s_p) / dn;
  }
  if (!(fit.a > 0) || !std::isfinite(fit.a)) {  // constrained optimum on the a = 0 face
    fit.a = 0;
    fit.c = s_y / dn;
  }
  fit.sse = 0;
  for (size_t i = 0; i < n; ++i) {
    double r = fit.a * std::exp(b * x[i]) + fit.c - y[i];
    fit.sse += r * r;
  }
  return fit;
}

// Lower convex hull of (q, cost), evaluated at every integer of [q_lo, q_hi].
std::vector<double> ConvexHullTable(const std::vector<OperationOption>& options, int64_t q_lo, int64_t q_hi) {
  std::vector<std::pair<double, double>> hull;  // options are sorted by q ascending
  for (const OperationOption& o : options) {
    std::pair<double, double> p{static_cast<double>(o.duration_units), o.cost_j};
    while (hull.size() >= 2) {
      const auto& a = hull[hull.size() - 2];
      const auto& b = hull[hull.size() - 1];
      double cross = (b.first - a.first) * (p.second - a.second) - (b.second - a.second) * (p.first - a.first);
      if (cross <= 0) {
        hull.pop_back();
      } else {
        break;
      }
    }
    hull.push_back(p);
  }
  std::vector<double> table;
  size_t seg = 0;
  for (int64_t q = q_lo; q <= q_hi; ++q) {
    double x = static_cast<double>(q);
    while (seg + 1 < hull.size() && hull[seg + 1].first < x) ++seg;
    if (hull.size() == 1 || x <= hull[0].first) {
      table.push_back(hull[0].second);
    } else if (seg + 1 >= hull.size()) {
      table.push_back(hull.back().second);
    } else {
      const auto& a = hull[seg];
      const auto& b = hull[seg + 1];
      table.push_back(a.second + (b.second - a.second) * (x - a.first) / (b.first - a.first));
    }
  }
  return table;
}

}  // namespace

ExponentialFit FitExponential(const std::vector<OperationOption>& options) {
  ExponentialFit result;
  result.q0 = options.front().duration_units;
  std::vector<double> x, y;
  for (const OperationOption& o : options) {
    x.push_back(static_cast<double>(o.duration_units - result.q0));
    y.push_back(o.cost_j);
  }
  double range = std::max(1.0, x.back());
  // Scan u = -b * range over [1e-4, 60] log-spaced, then refine around the best.
  constexpr int kScan = 240;
  const double lo = std::log(1e-4), hi = std::log(60.0);
  double best_u = 0;
  LinearFit best;
  int best_i = 0;
  for (int i = 0; i <= kScan; ++i) {
    double u = std::exp(lo + (hi - lo) * i / kScan);
    LinearFit fit = FitForRate(x, y, -u / range);
    if (fit.sse < best.sse) {
      best = fit;
      best_u = u;
      best_i = i;
    }
  }
  double left = std::exp(lo + (hi - lo) * std::max(0, best_i - 1) / kScan);
  double right = std::exp(lo + (hi - lo) * std::min(kScan, best_i + 1) / kScan);
  const double phi = (std::sqrt(5.0) - 1) / 2;
  double c1 = right - phi * (right - left), c2 = left + phi * (right - left);
  LinearFit f1 = FitForRate(x, y, -c1 / range), f2 = FitForRate(x, y, -c2 / range);
  for (int iter = 0; iter < 100 && right - left > 1e-12 * right; ++iter) {
    if (f1.sse <= f2.sse) {
      right = c2;
      c2 = c1;
      f2 = f1;
      c1 = right - phi * (right - left);
      f1 = FitForRate(x, y, -c1 / range);
    } else {
      left = c1;
      c1 = c2;
      f1 = f2;
      c2 = left + phi * (right - left);
      f2 = FitForRate(x, y, -c2 / range);
    }
  }
  for (auto [u, fit] : {std::pair{c1, f1}, std::pair{c2, f2}}) {
    if (fit.sse < best.sse) {
      best = fit;
      best_u = u;
    }
  }
  result.a = best.a;
  result.b = -best_u / range;
  result.c = best.c;
  result.rms_error_j = std::sqrt(best.sse / static_cast<double>(x.size()));
  return result;
}

CostTable BuildCostTable(const OperationOptions& options, CostModelKind kind) {
  const auto& opts = options.options;
  CostTable table;
  table.min_duration = opts.front().duration_units;
  int64_t q_hi = opts.back().duration_units;
  if (kind == CostModelKind::kExponential && opts.size() >= 3) {
    ExponentialFit fit = FitExponential(opts);
    for (int64_t q = table.min_duration; q <= q_hi; ++q) {
      table.cost_j.push_back(fit.a * std::exp(fit.b * static_cast<double>(q - fit.q0)) + fit.c);
    }
  } else {
    table.cost_j = ConvexHullTable(opts, table.min_duration, q_hi);
  }
  // Cut the range at the largest duration of least cost: slower than that only costs.
  size_t argmin = 0;
  for (size_t i = 1; i < table.cost_j.size(); ++i) {
    if (table.cost_j[i] <= table.cost_j[argmin]) argmin = i;
  }
  table.cost_j.resize(argmin + 1);
  table.max_duration = table.min_duration + static_cast<int64_t>(argmin);
  return table;
}

}  // namespace wattcut
