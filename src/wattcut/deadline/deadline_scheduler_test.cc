#include "wattcut/deadline/deadline_scheduler.h"

#include <glpk.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/shared_data_testing.h"
#include "wattcut/deadline/schedule_start_testing.h"

namespace wattcut::deadline {
namespace {

constexpr double kHour = 3600;
using testing::kStart;
constexpr double kKwh = 3.6e6;

StepSeries Series(const std::string& name, const std::vector<double>& hourly) {
  StepSeries s{"test-" + name + ".csv", name, {}};
  for (size_t h = 0; h < hourly.size(); ++h)
    s.steps.push_back({kStart + h * kHour, hourly[h], static_cast<int>(h) + 2});
  return s;
}

// The least objective of running exactly until `finish_s`, by linear programming (GLPK's simplex):
// x[k][i] seconds of plan i in interval k, each interval's seconds summing to its length up to
// finish_s, the iterations summing to the request's, plans over an interval's budget fixed at 0.
double LpObjective(const ScheduleRequest& r, double finish_s) {
  std::vector<double> cuts{r.start_s, r.deadline_s};
  for (const auto* s : {&r.price, &r.carbon, &r.budget}) {
    if (*s) {
      for (const Step& st : (*s)->steps) {
        if (st.time_s > r.start_s && st.time_s < r.deadline_s) cuts.push_back(st.time_s);
      }
    }
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  const size_t k_count = cuts.size() - 1, p_count = r.plans.size();
  glp_prob* lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MIN);
  glp_add_rows(lp, static_cast<int>(k_count + 1));
  glp_add_cols(lp, static_cast<int>(k_count * p_count));
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  for (size_t k = 0; k < k_count; ++k) {
    const double length = std::max(0.0, std::min(cuts[k + 1], finish_s) - cuts[k]);
    glp_set_row_bnds(lp, static_cast<int>(k + 1), GLP_FX, length, length);
    const double weight = r.objective == Objective::kCost     ? r.price->At(cuts[k])->value
                          : r.objective == Objective::kCarbon ? r.carbon->At(cuts[k])->value
                                                              : 1.0;
    const double budget = r.budget ? r.budget->At(cuts[k])->value : std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < p_count; ++i) {
      const int col = static_cast<int>(k * p_count + i + 1);
      if (r.plans[i].cap_power_w > budget) {
        glp_set_col_bnds(lp, col, GLP_FX, 0, 0);
      } else {
        glp_set_col_bnds(lp, col, GLP_LO, 0, 0);
      }
      glp_set_obj_coef(lp, col, weight * r.plans[i].power_w / kKwh);
      ia.push_back(static_cast<int>(k + 1)), ja.push_back(col), ar.push_back(1);
      ia.push_back(static_cast<int>(k_count + 1)), ja.push_back(col), ar.push_back(1 / r.plans[i].iteration_s);
    }
  }
  glp_set_row_bnds(lp, static_cast<int>(k_count + 1), GLP_FX, r.iterations, r.iterations);
  glp_load_matrix(lp, static_cast<int>(ia.size() - 1), ia.data(), ja.data(), ar.data());
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  double value = std::numeric_limits<double>::quiet_NaN();
  // The simplex in floating point, then the exact (rational) simplex from its basis: the
  // coefficients span ten orders of magnitude.
  glp_scale_prob(lp, GLP_SF_AUTO);
  if (glp_simplex(lp, &parm) == 0 && glp_exact(lp, &parm) == 0 && glp_get_status(lp) == GLP_OPT) {
    value = glp_get_obj_val(lp);
  }
  glp_delete_prob(lp);
  return value;
}

// Brute force over what an LP optimum can be (one coupling constraint: every interval on one plan,
// at most one on two): every plan per interval, every interval as the one that mixes with every
// second plan, at `finish_s`.
double BruteObjective(const ScheduleRequest& r, const std::vector<double>& weight, const std::vector<double>& budget,
                      double finish_s) {
  const size_t k_count = weight.size(), p_count = r.plans.size();
  std::vector<double> length(k_count);
  for (size_t k = 0; k < k_count; ++k)
    length[k] = std::max(0.0, std::min(r.start_s + (k + 1) * kHour, finish_s) - (r.start_s + k * kHour));
  double best = std::numeric_limits<double>::infinity();
  std::vector<size_t> pick(k_count, 0);
  while (true) {
    bool allowed = true;
    double n = 0, obj = 0;
    for (size_t k = 0; k < k_count; ++k) {
      const JobPlan& p = r.plans[pick[k]];
      allowed = allowed && p.cap_power_w <= budget[k];
      n += length[k] / p.iteration_s;
      obj += weight[k] * length[k] * p.power_w / kKwh;
    }
    if (allowed) {
      if (std::abs(n - r.iterations) < 1e-9 * r.iterations) best = std::min(best, obj);
      for (size_t j = 0; j < k_count; ++j) {
        for (size_t q = 0; q < p_count; ++q) {
          const JobPlan& a = r.plans[pick[j]];
          const JobPlan& b = r.plans[q];
          if (q == pick[j] || b.cap_power_w > budget[j] || length[j] <= 0) continue;
          // alpha of interval j on plan b: n + alpha L (1/tb - 1/ta) = N
          const double per = length[j] * (1 / b.iteration_s - 1 / a.iteration_s);
          if (per == 0) continue;
          const double alpha = (r.iterations - n) / per;
          if (alpha < 0 || alpha > 1) continue;
          best = std::min(best, obj + alpha * weight[j] * length[j] * (b.power_w - a.power_w) / kKwh);
        }
      }
    }
    size_t k = 0;
    while (k < k_count && ++pick[k] == p_count) pick[k++] = 0;
    if (k == k_count) break;
  }
  return best;
}

struct RandomCase {
  ScheduleRequest request;
  std::vector<double> weight, budget;
};

RandomCase MakeCase(std::mt19937_64& rng, size_t intervals, size_t plans, bool budgets) {
  std::uniform_real_distribution<double> u(0, 1);
  RandomCase c;
  ScheduleRequest& r = c.request;
  // Plans: faster ones draw more power, not always on the hull.
  double t = 1.0, power = 200;
  for (size_t i = 0; i < plans; ++i) {
    r.plans.push_back({i, t, power, power * (1.05 + 0.1 * u(rng))});
    t *= 0.8 + 0.15 * u(rng);
    power *= 1.1 + 0.4 * u(rng);
  }
  std::vector<double> price, cap;
  for (size_t k = 0; k < intervals; ++k) {
    price.push_back(0.05 + u(rng));
    cap.push_back(budgets && u(rng) < 0.4 ? r.plans[plans / 2].cap_power_w * (1 + 0.01 * u(rng)) : 1e9);
  }
  r.start_s = kStart;
  r.deadline_s = kStart + intervals * kHour;
  r.price = Series("price", price);
  if (budgets) r.budget = Series("watts", cap);
  // Between the slowest plans' count by the deadline and the fastest allowed.
  double slow = 0, fast = 0;
  for (size_t k = 0; k < intervals; ++k) {
    slow += kHour / r.plans.front().iteration_s;
    double best = 0;
    for (const JobPlan& p : r.plans) {
      if (p.cap_power_w <= cap[k]) best = std::max(best, 1 / p.iteration_s);
    }
    fast += kHour * best;
  }
  r.iterations = std::round(slow + (0.2 + 0.7 * u(rng)) * (fast - slow));
  c.weight = price;
  c.budget = cap;
  return c;
}

TEST(DeadlineSchedulerTest, TheLeastObjectiveAtAFinishTimeIsTheLinearProgramsOptimum) {
  std::mt19937_64 rng(42);
  int compared = 0;
  for (int trial = 0; trial < 40; ++trial) {
    RandomCase c = MakeCase(rng, 2 + trial % 7, 2 + trial % 5, trial % 2 == 1);
    DeadlineScheduler scheduler(c.request);
    Result<Schedule> s = scheduler.Run();
    ASSERT_TRUE(s.ok()) << s.error().message;
    for (double share : {0.8, 0.9, 0.97, 1.0}) {
      const double f = c.request.start_s + share * (c.request.deadline_s - c.request.start_s);
      const double ours = scheduler.ObjectiveFinishingAt(f);
      const double lp = LpObjective(c.request, f);
      ASSERT_EQ(std::isnan(ours), std::isnan(lp))
          << "trial " << trial << " share " << share << ": " << ours << " vs " << lp;
      if (std::isnan(ours)) continue;
      EXPECT_NEAR(ours, lp, 1e-7 * std::max(1.0, lp)) << "trial " << trial << " share " << share;
      ++compared;
    }
    // The chosen schedule is the cheapest finish time's.
    const double chosen = c.request.objective == Objective::kCost ? s->totals.cost : s->totals.energy_j;
    EXPECT_NEAR(chosen, LpObjective(c.request, s->totals.finish_s), 1e-7 * std::max(1.0, chosen));
  }
  EXPECT_GT(compared, 60);
}

// Six hourly intervals, four plans, two hours with a budget: the schedule is the brute force's
// best over every finish time on a 1-minute grid, and equal to it at its own finish time.
TEST(DeadlineSchedulerTest, SixIntervalsAgreeWithBruteForce) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 6; ++trial) {
    RandomCase c = MakeCase(rng, 6, 4, trial % 2 == 0);
    Result<Schedule> s = ScheduleToDeadline(c.request);
    ASSERT_TRUE(s.ok()) << s.error().message;
    const double ours = s->totals.cost;
    EXPECT_NEAR(ours, BruteObjective(c.request, c.weight, c.budget, s->totals.finish_s), 1e-7 * ours) << trial;
    double grid_best = std::numeric_limits<double>::infinity();
    for (double f = c.request.start_s + 60; f <= c.request.deadline_s + 1e-6; f += 60) {
      grid_best = std::min(grid_best, BruteObjective(c.request, c.weight, c.budget, f));
    }
    EXPECT_LE(ours, grid_best * (1 + 1e-9)) << trial;
    EXPECT_LE(ours, s->fastest.totals.cost * (1 + 1e-12));
    if (s->least_energy.available) {
      EXPECT_LE(ours, s->least_energy.totals.cost * (1 + 1e-12));
    }
    EXPECT_NEAR(s->totals.iterations, c.request.iterations, 1e-6 * c.request.iterations);
    for (const ScheduledInterval& k : s->intervals) {
      double seconds = 0;
      for (const PlanShare& p : k.shares) {
        seconds += p.seconds;
        EXPECT_LE(c.request.plans[p.point].cap_power_w, k.budget_w);
      }
      EXPECT_LE(seconds, k.end_s - k.start_s + 1e-6);
    }
  }
}

// The shipped GPT-3 175B frontier (A100, Perseus's reference planner), 7 days of iterations at the
// fastest plan with 10 % slack, and a price whose daily peak is three times its trough.
TEST(DeadlineSchedulerTest, OnTheGpt3FrontierADailyPriceCostsLessThanBothBaselines) {
  WATTCUT_REQUIRE_SHARED_FILE(path, "perseus-sosp24/iteration_time_energy/a100_sxm/gpt3-175b_bf16_mb12.csv");
  Result<CsvTable> t = CsvTable::Read(path);
  ASSERT_TRUE(t.ok());
  ScheduleRequest r;
  double fastest = 1e9;
  for (const CsvRow& row : t->rows()) {
    const double time = *t->number(row, 0), energy = *t->number(row, 1);
    r.plans.push_back({r.plans.size(), time, energy / time, energy / time});
    fastest = std::min(fastest, time);
  }
  r.start_s = kStart;
  r.iterations = std::floor(7 * 86400 / fastest);
  r.deadline_s = kStart + 1.1 * 7 * 86400;
  std::vector<double> price;
  for (int h = 0; h < 8 * 24; ++h)
    price.push_back(0.20 - 0.10 * std::cos(2 * M_PI * (h % 24 - 3) / 24));  // 0.10 .. 0.30
  r.price = Series("price", price);
  Result<Schedule> s = ScheduleToDeadline(r);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(s->least_energy.available);
  EXPECT_NEAR(s->totals.iterations, r.iterations, 1e-6 * r.iterations);
  EXPECT_LE(s->totals.finish_s, r.deadline_s + 1e-6);
  EXPECT_LT(s->totals.cost, s->fastest.totals.cost);
  EXPECT_LT(s->totals.cost, s->least_energy.totals.cost);
  std::printf(
      "cost: schedule %.4f, fastest %.4f (%.2f %% more), least-energy %.4f (%.2f %% more); energy %.2f / %.2f / %.2f "
      "kWh\n",
      s->totals.cost, s->fastest.totals.cost, 100 * (s->fastest.totals.cost / s->totals.cost - 1),
      s->least_energy.totals.cost, 100 * (s->least_energy.totals.cost / s->totals.cost - 1), s->totals.energy_j / kKwh,
      s->fastest.totals.energy_j / kKwh, s->least_energy.totals.energy_j / kKwh);
}

TEST(DeadlineSchedulerTest, ADeadlineTheFastestPlanCannotMeetIsRefusedWithTheShortfall) {
  ScheduleRequest r;
  r.plans = {{0, 2.0, 100, 100}, {1, 1.0, 300, 300}};
  r.start_s = kStart;
  r.deadline_s = kStart + 2 * kHour;
  r.iterations = 9000;  // 7200 at the fastest
  r.price = Series("price", {0.1});
  Result<Schedule> s = ScheduleToDeadline(r);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(
      s.error().message.find("cannot be met: at the fastest plan the job does 7200 of its 9000 iterations by then, "
                             "1800 short; it would finish about 0.50 h late"),
      std::string::npos)
      << s.error().message;
}

TEST(DeadlineSchedulerTest, ABudgetBelowEveryPlanIsRefusedNamingItsLineAndInterval) {
  ScheduleRequest r;
  r.plans = {{0, 2.0, 100, 120}, {1, 1.0, 300, 320}};
  r.start_s = kStart;
  r.deadline_s = kStart + 3 * kHour;
  r.iterations = 3000;
  r.price = Series("price", {0.1});
  r.budget = Series("watts_per_gpu", {50, 10, 50});
  r.budget_gpus = 4;  // 200 W, 40 W, 200 W for the job
  Result<Schedule> s = ScheduleToDeadline(r);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "test-watts_per_gpu.csv:3: column 'watts_per_gpu': the budget of 10.0 W per GPU (40 W for 4 GPUs) from "
            "2026-12-02 01:00:00.000000+00:00 to 2026-12-02 02:00:00.000000+00:00 allows no plan: the least power of "
            "any is 30.0 W per GPU");
}

TEST(DeadlineSchedulerTest, ASeriesThatBeginsAfterTheStartOrADeadlineBeforeItIsRefused) {
  ScheduleRequest r;
  r.plans = {{0, 1.0, 100, 100}};
  r.start_s = kStart - 60;
  r.deadline_s = kStart + kHour;
  r.iterations = 100;
  r.price = Series("price", {0.1});
  Result<Schedule> s = ScheduleToDeadline(r);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message.rfind("test-price.csv:2: the series begins at 2026-12-02 00:00:00", 0), 0u)
      << s.error().message;
  r.start_s = kStart;
  r.deadline_s = kStart - 1;
  s = ScheduleToDeadline(r);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("is not after the start"), std::string::npos);
  r.deadline_s = kStart + kHour;
  r.objective = Objective::kCarbon;
  s = ScheduleToDeadline(r);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "the carbon objective needs a carbon series");
}

// 48 hours whose prices repeat (three values, zero among them) and whose budgets cut the hull in
// some hours: ties between intervals' moves everywhere. The finish time the sweep picks is at least
// as cheap as every finish on a 1-minute grid (each costed by the exact allocation, which the test
// above checks against the LP), and its cost is the LP's there.
TEST(DeadlineSchedulerTest, RepeatedAndZeroPricesOverTwoDaysAgreeWithAOneMinuteGridAndTheLp) {
  std::mt19937_64 rng(53);
  int checked = 0;
  for (int trial = 0; trial < 8; ++trial) {
    RandomCase c = MakeCase(rng, 48, 6, trial % 2 == 1);
    std::vector<double> price;
    for (size_t k = 0; k < 48; ++k) price.push_back(std::vector<double>{0.0, 0.1, 0.25}[rng() % 3]);
    c.request.price = Series("price", price);
    DeadlineScheduler scheduler(c.request);
    Result<Schedule> s = scheduler.Run();
    ASSERT_TRUE(s.ok()) << s.error().message;
    double grid_best = std::numeric_limits<double>::infinity();
    for (double f = c.request.start_s + 60; f <= c.request.deadline_s + 1e-6; f += 60) {
      const double v = scheduler.ObjectiveFinishingAt(f);
      if (!std::isnan(v)) grid_best = std::min(grid_best, v);
    }
    const double ours = s->totals.cost;
    EXPECT_LE(ours, grid_best + 1e-9 * std::max(1.0, grid_best)) << "trial " << trial;
    EXPECT_NEAR(ours, LpObjective(c.request, s->totals.finish_s), 1e-7 * std::max(1.0, ours)) << "trial " << trial;
    EXPECT_NEAR(s->totals.iterations, c.request.iterations, 1e-6 * c.request.iterations);
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

// A price or carbon intensity so large that the run's cost overflows a double is refused naming
// its row (before: a schedule with cost "-" and "-nan % below the fastest plan", exit 0).
TEST(DeadlineSchedulerTest, ValuesThatOverflowTheCostAreRefusedNamingTheirRow) {
  ScheduleRequest r;
  r.plans = {{0, 2.0, 100, 100}, {1, 1.0, 260, 260}};
  r.start_s = kStart;
  r.deadline_s = kStart + 3 * kHour;
  r.iterations = 3 * kHour / 1.5;
  r.price = Series("price", {0.2, 1e308, 0.2});
  Result<Schedule> s = ScheduleToDeadline(r);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(
      s.error().message.rfind("test-price.csv:3: column 'price': 1e+308 makes the run's cost overflow a double", 0), 0u)
      << s.error().message;
  // Each row finite, their sum not.
  r.price = Series("price", {1e300, 1e300, 1e300});
  r.objective = Objective::kCost;
  s = ScheduleToDeadline(r);
  EXPECT_TRUE(s.ok()) << s.error().message;
  r.price.reset();
  r.objective = Objective::kCarbon;
  r.carbon = Series("carbon", {300, 300, 1e305});
  s = ScheduleToDeadline(r);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message.rfind("test-carbon.csv:4: column 'carbon': 1e+305 makes the run's carbon overflow", 0),
            0u)
      << s.error().message;
  // The largest price that does not overflow is planned, and every total is a number.
  r.carbon.reset();
  r.objective = Objective::kCost;
  r.price = Series("price", {1e200, 1e200, 1e200});
  s = ScheduleToDeadline(r);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(std::isfinite(s->totals.cost));
  EXPECT_TRUE(std::isfinite(s->fastest.totals.cost));
}

// Negative prices (before: refused, "expected a price >= 0"): the job runs its fastest plan
// through them, is paid for that energy, and never runs slower there to draw more of it.
TEST(DeadlineSchedulerTest, ANegativePriceRunsTheFastestPlanAndIsCountedAtItsPrice) {
  ScheduleRequest r;
  r.plans = {{0, 2.0, 100, 100}, {1, 1.5, 140, 140}, {2, 1.0, 260, 260}};
  r.start_s = kStart;
  r.deadline_s = kStart + 4 * kHour;
  r.iterations = 4 * kHour / 1.4;
  r.price = Series("price", {0.2, -0.05, 0.2, 0.2});
  Result<Schedule> s = ScheduleToDeadline(r);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const ScheduledInterval& negative = s->intervals[1];
  ASSERT_EQ(negative.shares.size(), 1u);
  EXPECT_EQ(negative.shares.front().point, 2u) << "the fastest plan";
  EXPECT_DOUBLE_EQ(negative.shares.front().seconds, kHour);
  EXPECT_LT(negative.cost, 0) << "paid for the energy";
  double sum = 0;
  for (const ScheduledInterval& k : s->intervals) sum += k.cost;
  EXPECT_NEAR(s->totals.cost, sum, 1e-12);
  EXPECT_NEAR(s->totals.iterations, r.iterations, 1e-6 * r.iterations);
  // The same request with that hour free: the same plans, a cost higher by what the hour paid.
  r.price = Series("price", {0.2, 0.0, 0.2, 0.2});
  Result<Schedule> free = ScheduleToDeadline(r);
  ASSERT_TRUE(free.ok()) << free.error().message;
  EXPECT_NEAR(free->totals.energy_j, s->totals.energy_j, 1e-9 * s->totals.energy_j);
  EXPECT_NEAR(free->totals.cost - s->totals.cost, -negative.cost, 1e-9);
}

// A price that does not change: the least cost is the least energy, a steady rate on the hull
// (two neighbouring plans shared), not more than the best single plan.
TEST(DeadlineSchedulerTest, AFlatPriceGivesTheLeastEnergySchedule) {
  ScheduleRequest r;
  r.plans = {{0, 2.0, 100, 100}, {1, 1.5, 140, 140}, {2, 1.0, 260, 260}};
  r.start_s = kStart;
  r.deadline_s = kStart + 4 * kHour;
  r.iterations = 4 * kHour / 1.25;  // between plans 0 and 1 and 2
  r.price = Series("price", {0.2, 0.2, 0.2, 0.2});
  Result<Schedule> s = ScheduleToDeadline(r);
  ASSERT_TRUE(s.ok()) << s.error().message;
  r.objective = Objective::kEnergy;
  Result<Schedule> e = ScheduleToDeadline(r);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_NEAR(s->totals.energy_j, e->totals.energy_j, 1e-6 * e->totals.energy_j);
  EXPECT_NEAR(s->totals.cost, 0.2 * s->totals.energy_j / kKwh, 1e-9);
  EXPECT_LE(e->totals.energy_j, e->least_energy.totals.energy_j);
  // The least-energy single plan that finishes in 4 h is the fastest (the others take 6.4 and 4.8 h).
  EXPECT_EQ(e->least_energy.intervals.front().shares.front().point, 2u);
}

}  // namespace
}  // namespace wattcut::deadline
