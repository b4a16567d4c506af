// Series-parallel reduction of a network with flow bounds, before a minimum cut.
//
// Critical DAGs of pipeline schedules are mostly long chains (one stage's computations
// in a row) joined by a few cross-stage arcs. A max flow on them needs one Dinic phase
// per path length, which made the solver spend 90 % of its time there. Reducing first
// is exact (for any feasible network) and leaves a graph a fraction of the size:
//   * series: a node other than source/sink with exactly one arc in, a = [la, ua], and
//     one arc out, b = [lb, ub], becomes one arc [max(la, lb), min(ua, ub)]; a cut
//     crosses it forward by cutting the member with the smaller upper bound and
//     backward by cutting the member with the larger lower bound. la > ub or lb > ua
//     makes the network infeasible;
//   * parallel: arcs with the same ends become one arc [la + lb, ua + ub], crossed when
//     both are.
// Run() reduces; Expand() maps how each reduced arc crosses a cut back to the original
// arcs.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace wattcut {

struct BoundedArc {
  int from = 0, to = 0;
  double lower = 0, upper = 0;
};

class SeriesParallelReduction {
 public:
  // Returns false when a series pair proves the bounds infeasible.
  bool Run(int num_nodes, const std::vector<BoundedArc>& arcs, int source, int sink);
  // The arcs left after reduction, and the id of each (for Expand).
  const std::vector<BoundedArc>& reduced_arcs() const { return reduced_; }
  // crossing[i] for reduced arc i: +1 forward, -1 backward, 0 not crossing. Fills
  // original_crossing (sized to the original arc count) the same way.
  void Expand(const std::vector<int8_t>& crossing, std::vector<int8_t>& original_crossing) const;

 private:
  enum class Kind : uint8_t { kOriginal, kSeries, kParallel };
  struct Node {
    BoundedArc arc;
    Kind kind = Kind::kOriginal;
    bool alive = true;
    int first = -1, second = -1;  // members of a composite (series: first is the earlier arc)
  };
  int AddArc(const BoundedArc& arc, Kind kind, int first, int second);
  void Insert(int id);  // register an arc; merge it with a parallel one
  void TrySeries(int node);

  int num_original_ = 0;
  int source_ = 0, sink_ = 0;
  bool infeasible_ = false;
  std::vector<Node> nodes_;
  std::vector<std::vector<int>> in_, out_;   // arc ids, alive or not (lazy deletion)
  std::vector<int> in_degree_, out_degree_;  // alive arcs only
  std::unordered_map<uint64_t, int> by_ends_;
  std::vector<int> pending_;
  std::vector<BoundedArc> reduced_;
  std::vector<int> reduced_ids_;
};

}  // namespace wattcut
