#include "wattcut/dag/computation_dag.h"

#include <string>

namespace wattcut {

namespace {

// The slot of a kind in the per-(piece, microbatch) index: forward, backward (or
// backward_input), backward_weight.
int Slot(InstructionKind kind) {
  switch (kind) {
    case InstructionKind::kForward:
      return 0;
    case InstructionKind::kBackward:
    case InstructionKind::kBackwardInput:
      return 1;
    case InstructionKind::kBackwardWeight:
      return 2;
  }
  return 0;
}

}  // namespace

Result<ComputationDag> BuildComputationDag(const PipelineSchedule& schedule) {
  ComputationDag dag;
  const int num_devices = static_cast<int>(schedule.size());
  if (num_devices == 0) return Error{"empty schedule"};
  bool whole = false, split = false;
  for (const auto& list : schedule) {
    for (const Computation& c : list) {
      whole = whole || c.kind == InstructionKind::kBackward;
      split = split || c.kind == InstructionKind::kBackwardInput || c.kind == InstructionKind::kBackwardWeight;
    }
  }
  if (whole && split) return Error{"the schedule mixes backward with backward_input / backward_weight computations"};
  const int kinds = split ? 3 : 2;
  const int chunks = ScheduleChunks(schedule);
  const int per_microbatch = kinds * chunks;
  const int num_microbatches = static_cast<int>(schedule[0].size()) / per_microbatch;
  const int num_pieces = num_devices * chunks;
  auto where = [&](int device, int chunk) {
    return "stage " + std::to_string(device) + (chunks > 1 ? " chunk " + std::to_string(chunk) : std::string());
  };
  // index[piece][slot][microbatch] -> node
  std::vector<std::vector<std::vector<int>>> index(
      static_cast<size_t>(num_pieces),
      std::vector<std::vector<int>>(static_cast<size_t>(kinds),
                                    std::vector<int>(static_cast<size_t>(num_microbatches), -1)));
  for (int s = 0; s < num_devices; ++s) {
    const auto& list = schedule[static_cast<size_t>(s)];
    if (static_cast<int>(list.size()) != per_microbatch * num_microbatches || num_microbatches == 0) {
      return Error{"stage " + std::to_string(s) + " has " + std::to_string(list.size()) + " computations, expected " +
                   std::to_string(per_microbatch * std::max(num_microbatches, 1))};
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const Computation& c = list[i];
      if (c.chunk < 0)
        return Error{"stage " + std::to_string(s) + ": chunk " + std::to_string(c.chunk) + " out of range"};
      if (c.microbatch < 0 || c.microbatch >= num_microbatches) {
        return Error{where(s, c.chunk) + ": microbatch " + std::to_string(c.microbatch) + " out of range"};
      }
      const int piece = ProfileStageOf(s, c.chunk, num_devices);
      int& slot =
          index[static_cast<size_t>(piece)][static_cast<size_t>(Slot(c.kind))][static_cast<size_t>(c.microbatch)];
      if (slot != -1) {
        return Error{where(s, c.chunk) + ": " + std::string(InstructionName(c.kind)) + " of microbatch " +
                     std::to_string(c.microbatch) + " appears twice"};
      }
      slot = dag.num_nodes();
      if (i > 0) dag.edges.emplace_back(slot - 1, slot);
      dag.nodes.push_back({s, piece, c});
    }
  }
  // A cross-piece edge that joins consecutive computations of one device (one device
  // running several chunks) is already there.
  auto add_cross = [&](int u, int v) {
    if (v != u + 1 || dag.nodes[static_cast<size_t>(u)].stage != dag.nodes[static_cast<size_t>(v)].stage) {
      dag.edges.emplace_back(u, v);
    }
  };
  for (int k = 0; k + 1 < num_pieces; ++k) {
    for (int m = 0; m < num_microbatches; ++m) {
      const auto uk = static_cast<size_t>(k), ms = static_cast<size_t>(m);
      add_cross(index[uk][0][ms], index[uk + 1][0][ms]);
      add_cross(index[uk + 1][1][ms], index[uk][1][ms]);
    }
  }
  // Reject cyclic orders (e.g. a backward scheduled before its own forward on the last stage).
  std::vector<int> indegree(dag.nodes.size(), 0);
  std::vector<std::vector<int>> out(dag.nodes.size());
  for (auto [u, v] : dag.edges) {
    out[static_cast<size_t>(u)].push_back(v);
    ++indegree[static_cast<size_t>(v)];
  }
  // The last piece's F(m) -> B(m) and each B(k, m) -> W(k, m) have no edge of their own
  // (their device's order carries them), so without them here a device running B(m) before
  // F(m), or W before B, went unnoticed. Add them to the check only; the DAG's edges stay
  // as documented.
  auto check_only = [&](int u, int v) {
    out[static_cast<size_t>(u)].push_back(v);
    ++indegree[static_cast<size_t>(v)];
  };
  for (int m = 0; m < num_microbatches; ++m) {
    const auto last = static_cast<size_t>(num_pieces - 1), ms = static_cast<size_t>(m);
    check_only(index[last][0][ms], index[last][1][ms]);
    if (split) {
      for (size_t k = 0; k < index.size(); ++k) check_only(index[k][1][ms], index[k][2][ms]);
    }
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
