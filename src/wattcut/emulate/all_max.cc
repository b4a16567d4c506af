#include "wattcut/emulate/all_max.h"

#include <algorithm>

#include "wattcut/dag/computation_dag.h"

namespace wattcut {

double AllMaxIterationTime(const Profile& profile, const PipelineSchedule& schedule) {
  Result<ComputationDag> dag = BuildComputationDag(schedule);
  if (!dag.ok()) return 0;
  // Nodes are stage-major in schedule order; edges go forward in a topological order
  // only within a stage, so relax in Kahn order.
  const size_t n = dag->nodes.size();
  std::vector<std::vector<int>> out(n);
  std::vector<int> indegree(n, 0);
  for (auto [u, v] : dag->edges) {
    out[static_cast<size_t>(u)].push_back(v);
    ++indegree[static_cast<size_t>(v)];
  }
  std::vector<double> finish(n, 0), start(n, 0);
  std::vector<int> ready;
  for (size_t v = 0; v < n; ++v) {
    if (indegree[v] == 0) ready.push_back(static_cast<int>(v));
  }
  double makespan = 0;
  while (!ready.empty()) {
    auto u = static_cast<size_t>(ready.back());
    ready.pop_back();
    const auto& node = dag->nodes[u];
    finish[u] = start[u] + profile.fastest_measurement(node.stage, node.computation.kind).time_s;
    makespan = std::max(makespan, finish[u]);
    for (int v : out[u]) {
      start[static_cast<size_t>(v)] = std::max(start[static_cast<size_t>(v)], finish[u]);
      if (--indegree[static_cast<size_t>(v)] == 0) ready.push_back(v);
    }
  }
  return makespan;
}

double AllMaxEnergy(const Profile& profile, const PipelineSchedule& schedule, double iteration_time_s,
                    double p2p_power_w) {
  double energy = 0;
  for (size_t s = 0; s < schedule.size(); ++s) {
    double compute_s = 0;
    for (const Computation& c : schedule[s]) {
      const Measurement& m = profile.fastest_measurement(static_cast<int>(s), c.kind);
      energy += m.energy_j;
      compute_s += m.time_s;
    }
    energy += p2p_power_w * std::max(0.0, iteration_time_s - compute_s);
  }
  return energy;
}

}  // namespace wattcut
