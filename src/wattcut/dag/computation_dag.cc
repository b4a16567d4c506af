#include "wattcut/dag/computation_dag.h"

#include <string>

namespace wattcut {

Result<ComputationDag> BuildComputationDag(const PipelineSchedule& schedule) {
  ComputationDag dag;
  const int num_stages = static_cast<int>(schedule.size());
  if (num_stages == 0) return Error{"empty schedule"};
  const int num_microbatches = static_cast<int>(schedule[0].size() / 2);
  // index[stage][kind][microbatch] -> node
  std::vector<std::vector<std::vector<int>>> index(
      static_cast<size_t>(num_stages),
      std::vector<std::vector<int>>(2, std::vector<int>(static_cast<size_t>(num_microbatches), -1)));
  for (int s = 0; s < num_stages; ++s) {
    const auto& list = schedule[static_cast<size_t>(s)];
    if (static_cast<int>(list.size()) != 2 * num_microbatches) {
      return Error{"stage " + std::to_string(s) + " has " + std::to_string(list.size()) + " computations, expected " +
                   std::to_string(2 * num_microbatches)};
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const Computation& c = list[i];
      if (c.microbatch < 0 || c.microbatch >= num_microbatches) {
        return Error{"stage " + std::to_string(s) + ": microbatch " + std::to_string(c.microbatch) + " out of range"};
      }
      int& slot = index[static_cast<size_t>(s)][static_cast<size_t>(c.kind)][static_cast<size_t>(c.microbatch)];
      if (slot != -1) {
        return Error{"stage " + std::to_string(s) + ": " + std::string(InstructionName(c.kind)) + " of microbatch " +
                     std::to_string(c.microbatch) + " appears twice"};
      }
      slot = dag.num_nodes();
      if (i > 0) dag.edges.emplace_back(slot - 1, slot);
      dag.nodes.push_back({s, c});
    }
  }
  for (int s = 0; s + 1 < num_stages; ++s) {
    for (int m = 0; m < num_microbatches; ++m) {
      const auto us = static_cast<size_t>(s), ms = static_cast<size_t>(m);
      dag.edges.emplace_back(index[us][0][ms], index[us + 1][0][ms]);
      dag.edges.emplace_back(index[us + 1][1][ms], index[us][1][ms]);
    }
  }
  // Reject cyclic orders (e.g. a backward scheduled before its own forward on the last stage).
  std::vector<int> indegree(dag.nodes.size(), 0);
  std::vector<std::vector<int>> out(dag.nodes.size());
  for (auto [u, v] : dag.edges) {
    out[static_cast<size_t>(u)].push_back(v);
    ++indegree[static_cast<size_t>(v)];
  }
  // The last stage's F(m) -> B(m) dependency has no edge of its own (the stage order
  // carries it), so without it here a last stage running B(m) before F(m) went unnoticed.
  // Add it to the check only; the DAG's edges stay as documented.
  for (int m = 0; m < num_microbatches; ++m) {
    const auto last = static_cast<size_t>(num_stages - 1), ms = static_cast<size_t>(m);
    out[static_cast<size_t>(index[last][0][ms])].push_back(index[last][1][ms]);
    ++indegree[static_cast<size_t>(index[last][1][ms])];
  }
  std::vector<int> ready;
  for (int v = 0; v < dag.num_nodes(); ++v) {
    if (indegree[static_cast<size_t>(v)] == 0) ready.push_back(v);
  }
  int visited = 0;
  while (!ready.empty()) {
    int u = ready.back();
    ready.pop_back();
    ++visited;
    for (int v : out[static_cast<size_t>(u)]) {
      if (--indegree[static_cast<size_t>(v)] == 0) ready.push_back(v);
    }
  }
  if (visited != dag.num_nodes()) return Error{"the schedule's order makes the dependencies cyclic"};
  return dag;
}

}  // namespace wattcut
