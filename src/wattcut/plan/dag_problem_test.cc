#include "wattcut/plan/dag_problem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "wattcut/base/general_text.h"
#include "wattcut/solver/glpk_oracle_testing.h"

namespace wattcut {
namespace {

// Issue 14's two-operation chain, as a DAG file.
constexpr const char* kChain = R"({"format": "wattcut.dag/v1", "unit_time_s": 1,
  "operations": [
    {"name": "A", "options": [{"time": 2, "energy": 10, "knob": 1410}, {"time": 1, "energy": 14, "knob": 1980}]},
    {"name": "B", "options": [{"time": 3, "energy": 6, "knob": 1410}, {"time": 2, "energy": 9, "knob": 1980}]}],
  "edges": [["A", "B"]]})";

GenericDag Parsed(const std::string& text) {
  Result<GenericDag> dag = ParseDag(text, "dag.json");
  EXPECT_TRUE(dag.ok()) << dag.error().message;
  return dag.ok() ? *dag : GenericDag{};
}

DagPlannerOptions Options(const GenericDag& dag, CostModelKind model) {
  DagPlannerOptions options;
  options.unit_time_s = DagUnitTime(dag, std::nullopt, 0.001);
  options.cost_model = model;
  return options;
}

TEST(DagProblem, TheTwoOperationChainFromADagFile) {
  const GenericDag dag = Parsed(kChain);
  Result<DagFrontier> frontier = ComputeDagFrontier(dag, Options(dag, CostModelKind::kConvexHull));
  ASSERT_TRUE(frontier.ok()) << frontier.error().message;
  std::vector<std::pair<double, double>> points;
  for (const FrontierPoint& p : frontier->points()) points.emplace_back(p.time_s, p.energy_j);
  EXPECT_EQ(points, (std::vector<std::pair<double, double>>{{5, 16}, {4, 19}, {3, 23}}));
  // (5, 16): both slow; (4, 19): B fast (3 J more, A's speed-up costs 4); (3, 23): both fast.
  EXPECT_EQ(frontier->KnobsAt(0), (std::vector<int>{1410, 1410}));
  EXPECT_EQ(frontier->KnobsAt(1), (std::vector<int>{1410, 1980}));
  EXPECT_EQ(frontier->KnobsAt(2), (std::vector<int>{1980, 1980}));
  EXPECT_EQ(frontier->points()[1].duration_units, 4);
  EXPECT_EQ(frontier->points()[1].effective_energy_j, 19);
}

TEST(DagProblem, BlockingPowerIsAddedPerDeviceOverTheIteration) {
  std::string text = kChain;
  text.replace(text.find("\"operations\""), 0, R"("devices": [{"name": "g0", "blocking_power_w": 2}, {"name": "g1",
      "blocking_power_w": 0.5}], )");
  text.replace(text.find("{\"name\": \"A\", "), 14, R"({"name": "A", "device": "g0", )");
  const GenericDag dag = Parsed(text);
  Result<DagFrontier> frontier = ComputeDagFrontier(dag, Options(dag, CostModelKind::kConvexHull));
  ASSERT_TRUE(frontier.ok()) << frontier.error().message;
  ASSERT_EQ(frontier->points().size(), 3u);
  // A's effective energy is its energy less g0's 2 W over its duration; every device blocks
  // over the whole iteration: energy = effective + 2.5 W x time.
  const FrontierPoint& slowest = frontier->points()[0];
  EXPECT_EQ(slowest.effective_energy_j, (10 - 2 * 2) + 6);
  EXPECT_EQ(slowest.energy_j, slowest.effective_energy_j + 2.5 * 5);
}

TEST(DagProblem, AKnobIsTheSlowestOptionNoLongerThanThePlannedDuration) {
  const GenericDag dag = Parsed(R"({"format": "wattcut.dag/v1", "operations": [{"name": "x", "options": [
      {"time": 0.004, "energy": 10, "knob": 1}, {"time": 0.002, "energy": 12, "knob": 2},
      {"time": 0.0065, "energy": 9, "knob": 3}]}]})");
  Result<DagFrontier> frontier = ComputeDagFrontier(dag, Options(dag, CostModelKind::kExponential));
  ASSERT_TRUE(frontier.ok()) << frontier.error().message;
  EXPECT_EQ(frontier->KnobFor(0, 2), 2);
  EXPECT_EQ(frontier->KnobFor(0, 3), 2);
  EXPECT_EQ(frontier->KnobFor(0, 4), 1);
  EXPECT_EQ(frontier->KnobFor(0, 5), 1);
  EXPECT_EQ(frontier->KnobFor(0, 6), 3);
  EXPECT_EQ(frontier->KnobFor(0, 1), 2);  // below the fastest: the fastest
}

TEST(DagProblem, ErrorsNameTheOperation) {
  const GenericDag dag = Parsed(R"({"format": "wattcut.dag/v1", "operations": [{"name": "ok", "options": [
      {"time": 1, "energy": 1, "knob": 1}]}, {"name": "tiny", "options": [{"time": 1e-6, "energy": 1, "knob": 5}]}]})");
  Result<DagPlanningProblem> problem = BuildDagProblem(dag, Options(dag, CostModelKind::kExponential));
  ASSERT_FALSE(problem.ok());
  EXPECT_EQ(problem.error().message.rfind("operation 'tiny' (operations[1]): the time at 5 MHz", 0), 0u)
      << problem.error().message;
  DagPlannerOptions bad;
  bad.unit_time_s = -1;
  EXPECT_EQ(BuildDagProblem(dag, bad).error().message, "unit_time_s must be a positive number of seconds");
}

// The planning limits (planning_limits.h) hold for DAGs as for pipelines, before any work.
TEST(DagProblem, ThePlanningLimitsAreChecked) {
  const GenericDag chain = Parsed(kChain);
  DagPlannerOptions fine = Options(chain, CostModelKind::kConvexHull);
  fine.unit_time_s = 1e-7;  // 2 x 10^7 cost table entries
  Result<DagPlanningProblem> tables = BuildDagProblem(chain, fine);
  ASSERT_FALSE(tables.ok());
  EXPECT_NE(tables.error().message.find("more than the limit of 16777216"), std::string::npos)
      << tables.error().message;

  // A chain of 2,000 operations, each 1 or 2 s at a unit time of 1 ms: 2 M points.
  GenericDag long_chain;
  for (int i = 0; i < 2000; ++i) {
    long_chain.operations.push_back({"op" + std::to_string(i), -1, {{1.0, 2.0, 1}, {2.0, 1.0, 2}}});
    if (i > 0) long_chain.edges.emplace_back(i - 1, i);
  }
  DagPlannerOptions options;
  options.unit_time_s = 0.001;
  options.cost_model = CostModelKind::kConvexHull;
  Result<DagPlanningProblem> points = BuildDagProblem(long_chain, options);
  ASSERT_FALSE(points.ok());
  EXPECT_NE(points.error().message.find("1000000"), std::string::npos) << points.error().message;
}

TEST(DagProblem, TheFlagOverridesTheFilesUnitTime) {
  const GenericDag dag = Parsed(kChain);
  EXPECT_EQ(DagUnitTime(dag, std::nullopt, 0.001), 1.0);
  EXPECT_EQ(DagUnitTime(dag, 0.5, 0.001), 0.5);
  EXPECT_EQ(DagUnitTime(GenericDag{}, std::nullopt, 0.001), 0.001);
}

// A random DAG file: 2-7 operations in a random order, edges forward in a random topological
// order, 1-4 options each, on 0-2 devices with random blocking power.
std::string RandomDagText(std::mt19937& rng) {
  std::uniform_int_distribution<int> ops(2, 7), option_count(1, 4), devices(0, 2);
  std::uniform_real_distribution<double> time(0.6, 4.0), energy(1.0, 30.0), power(0.0, 3.0), coin(0.0, 1.0);
  const int n = ops(rng), d = devices(rng);
  std::vector<int> order(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::string text = R"({"format": "wattcut.dag/v1", "unit_time_s": 0.25, "devices": [)";
  for (int k = 0; k < d; ++k) {
    text += std::string(k ? ", " : "") + R"({"name": "g)" + std::to_string(k) + R"(", "blocking_power_w": )" +
            GeneralText(power(rng)) + "}";
  }
  text += R"(], "operations": [)";
  for (int i = 0; i < n; ++i) {
    text += std::string(i ? ", " : "") + R"({"name": "op)" + std::to_string(order[static_cast<size_t>(i)]) + "\"";
    if (d > 0 && coin(rng) < 0.7) text += R"(, "device": "g)" + std::to_string(i % d) + "\"";
    text += R"(, "options": [)";
    const int m = option_count(rng);
    for (int k = 0; k < m; ++k) {
      text += std::string(k ? ", " : "") + R"({"time": )" + GeneralText(time(rng)) + R"(, "energy": )" +
              GeneralText(energy(rng)) + R"(, "knob": )" + std::to_string(100 * k) + "}";
    }
    text += "]}";
  }
  text += R"(], "edges": [)";
  bool first = true;
  for (int u = 0; u < n; ++u) {
    for (int v = u + 1; v < n; ++v) {
      if (coin(rng) < 0.35) {
        text += std::string(first ? "" : ", ") + "[\"op" + std::to_string(u) + "\", \"op" + std::to_string(v) + "\"]";
        first = false;
      }
    }
  }
  return text + "]}";
}

TEST(DagProblem, EveryPointOfRandomDagsIsTheIntegerProgramsOptimum) {
  std::mt19937 rng(14014);
  int points_checked = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const std::string text = RandomDagText(rng);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + text);
    const GenericDag dag = Parsed(text);
    const DagPlannerOptions options =
        Options(dag, trial % 2 ? CostModelKind::kConvexHull : CostModelKind::kExponential);
    Result<DagPlanningProblem> problem = BuildDagProblem(dag, options);
    ASSERT_TRUE(problem.ok()) << problem.error().message;
    Result<DagFrontier> frontier = ComputeDagFrontier(dag, options);
    ASSERT_TRUE(frontier.ok()) << frontier.error().message;
    for (size_t i = 0; i < frontier->points().size(); ++i) {
      const FrontierPoint& p = frontier->points()[i];
      SCOPED_TRACE("point " + std::to_string(i));
      if (i > 0) {
        ASSERT_EQ(p.duration_units, frontier->points()[i - 1].duration_units - 1);
      }
      const double oracle = OracleMinCost(problem->problem, p.duration_units);
      ASSERT_FALSE(std::isnan(oracle));
      EXPECT_NEAR(p.effective_energy_j, oracle, 1e-6);
      EXPECT_NEAR(p.energy_j, oracle + problem->blocking_power_w * p.time_s, 1e-6);
      EXPECT_DOUBLE_EQ(p.time_s, static_cast<double>(p.duration_units) * 0.25);
      // Each knob's option is the slowest that fits the planned duration.
      const std::vector<int64_t> durations = frontier->DurationsAt(i);
      const std::vector<int> knobs = frontier->KnobsAt(i);
      for (size_t op = 0; op < durations.size(); ++op) {
        const auto& opts = problem->options[op];
        int64_t best = -1;
        int knob = opts.front().second;
        for (auto [d, k] : opts) {
          if (d <= durations[op] && d > best) best = d, knob = k;
        }
        EXPECT_EQ(knobs[op], knob) << "operation " << op;
      }
      ++points_checked;
    }
  }
  EXPECT_GT(points_checked, 100);
  RecordProperty("points_checked", std::to_string(points_checked));
}

}  // namespace
}  // namespace wattcut
