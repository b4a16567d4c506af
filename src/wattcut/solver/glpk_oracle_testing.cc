#include "wattcut/solver/glpk_oracle_testing.h"

#include <glpk.h>

#include <cmath>
#include <utility>
#include <vector>

namespace wattcut {

// Least total cost with makespan <= deadline, by exact integer programming (GLPK):
// integer durations d_i in [min, max], start times s_i >= 0, s_v >= s_u + d_u for each
// precedence, s_i + d_i <= deadline, and an epigraph variable z_i above every segment
// of activity i's convex piecewise-linear cost. Returns NaN when infeasible.
double OracleMinCost(const TimeCostProblem& problem, int64_t deadline) {
  glp_prob* lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MIN);
  const int n = problem.num_activities();
  // Columns: d_i (1..n), s_i (n+1..2n), z_i (2n+1..3n).
  glp_add_cols(lp, 3 * n);
  for (int i = 0; i < n; ++i) {
    const CostTable& t = problem.table_of(i);
    glp_set_col_bnds(lp, 1 + i, t.min_duration == t.max_duration ? GLP_FX : GLP_DB, static_cast<double>(t.min_duration),
                     static_cast<double>(t.max_duration));
    glp_set_col_kind(lp, 1 + i, GLP_IV);
    glp_set_col_bnds(lp, 1 + n + i, GLP_LO, 0, 0);
    glp_set_col_bnds(lp, 1 + 2 * n + i, GLP_FR, 0, 0);
    glp_set_obj_coef(lp, 1 + 2 * n + i, 1.0);
  }
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  int row = 0;
  auto add_row = [&](std::vector<std::pair<int, double>> terms, int type, double lo, double hi) {
    ++row;
    glp_add_rows(lp, 1);
    glp_set_row_bnds(lp, row, type, lo, hi);
    for (auto [col, coef] : terms) {
      ia.push_back(row);
      ja.push_back(col);
      ar.push_back(coef);
    }
  };
  for (auto [u, v] : problem.precedences) {  // s_v - s_u - d_u >= 0
    add_row({{1 + n + v, 1.0}, {1 + n + u, -1.0}, {1 + u, -1.0}}, GLP_LO, 0, 0);
  }
  for (int i = 0; i < n; ++i) {
    add_row({{1 + n + i, 1.0}, {1 + i, 1.0}}, GLP_UP, 0, static_cast<double>(deadline));
    const CostTable& t = problem.table_of(i);
    if (t.min_duration == t.max_duration) {
      add_row({{1 + 2 * n + i, 1.0}}, GLP_LO, t.cost_j[0], 0);
      continue;
    }
    for (int64_t k = t.min_duration; k < t.max_duration; ++k) {
      // z >= c(k) + (c(k+1) - c(k)) * (d - k)
      double slope = t.at(k + 1) - t.at(k);
      add_row({{1 + 2 * n + i, 1.0}, {1 + i, -slope}}, GLP_LO, t.at(k) - slope * static_cast<double>(k), 0);
    }
  }
  glp_load_matrix(lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  glp_iocp params;
  glp_init_iocp(&params);
  params.presolve = GLP_ON;
  params.msg_lev = GLP_MSG_OFF;
  int rc = glp_intopt(lp, &params);
  double value = std::nan("");
  if (rc == 0 && glp_mip_status(lp) == GLP_OPT) value = glp_mip_obj_val(lp);
  glp_delete_prob(lp);
  return value;
}

}  // namespace wattcut
