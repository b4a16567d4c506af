#include "wattcut/plan/pipeline_execution.h"

#include <algorithm>

#include "wattcut/dag/computation_dag.h"

namespace wattcut {

PipelineExecution ExecutePipeline(const PipelineSchedule& schedule,
                                  const std::vector<std::vector<double>>& durations_s) {
  PipelineExecution result;
  Result<ComputationDag> dag = BuildComputationDag(schedule);
  if (!dag.ok()) return result;
  const size_t n = dag->nodes.size();
  std::vector<double> duration(n);
  std::vector<size_t> stage_offset(schedule.size() + 1, 0);
  for (size_t s = 0; s < schedule.size(); ++s) stage_offset[s + 1] = stage_offset[s] + schedule[s].size();
  for (size_t s = 0; s < schedule.size(); ++s) {
    for (size_t i = 0; i < schedule[s].size(); ++i) duration[stage_offset[s] + i] = durations_s[s][i];
  }
  std::vector<std::vector<int>> out(n), in(n);
  std::vector<int> indegree(n, 0);
  for (auto [u, v] : dag->edges) {
    out[static_cast<size_t>(u)].push_back(v);
    in[static_cast<size_t>(v)].push_back(u);
    ++indegree[static_cast<size_t>(v)];
  }
  std::vector<int> order, ready;
  for (size_t v = 0; v < n; ++v) {
    if (indegree[v] == 0) ready.push_back(static_cast<int>(v));
  }
  while (!ready.empty()) {
    int u = ready.back();
    ready.pop_back();
    order.push_back(u);
    for (int v : out[static_cast<size_t>(u)]) {
      if (--indegree[static_cast<size_t>(v)] == 0) ready.push_back(v);
    }
  }
  std::vector<double> start(n, 0), latest_end(n, 0);
  double makespan = 0;
  for (int u : order) {
    const auto us = static_cast<size_t>(u);
    for (int p : in[us])
      start[us] = std::max(start[us], start[static_cast<size_t>(p)] + duration[static_cast<size_t>(p)]);
    makespan = std::max(makespan, start[us] + duration[us]);
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const auto us = static_cast<size_t>(*it);
    latest_end[us] = makespan;
    for (int v : out[us])
      latest_end[us] = std::min(latest_end[us], latest_end[static_cast<size_t>(v)] - duration[static_cast<size_t>(v)]);
  }
  result.iteration_time_s = makespan;
  result.timing.resize(schedule.size());
  result.stage_compute_s.assign(schedule.size(), 0);
  for (size_t s = 0; s < schedule.size(); ++s) {
    for (size_t i = 0; i < schedule[s].size(); ++i) {
      size_t v = stage_offset[s] + i;
      double end = start[v] + duration[v];
      result.timing[s].push_back({start[v], end, latest_end[v] - end});
      result.stage_compute_s[s] += duration[v];
    }
  }
  return result;
}

}  // namespace wattcut
