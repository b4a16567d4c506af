// Routing of a row's requests: each goes to the least-loaded server of its priority class (fewest
// outstanding requests); among the least loaded, the first in the class's order starting from a
// position that moves on by one per request (round robin), wrapping around.
//
// The answer is the one a scan over every server of the class gives, but found in O(log n): a
// min tree over each class's members. The scan made a day grow as servers x requests; the
// tree makes routing O(log n) a request (still a share of the cost that grows with the row).
// row_simulator_fingerprint_test pins the simulator's answers from before the tree,
// least_loaded_router_test checks it against the scan.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "wattcut/polca/arrival_expansion.h"

namespace wattcut::polca {

class LeastLoadedRouter {
 public:
  // `priorities[i]` is server i's class; every server starts with no load.
  explicit LeastLoadedRouter(const std::vector<Priority>& priorities);

  // The server for a request of `priority` (the other class's when its own has no server).
  // Moves that class's round-robin position on. Needs at least one server.
  size_t Route(Priority priority);
  // Server i's outstanding requests changed to `load`.
  void SetLoad(size_t server, int load);

  int load(size_t server) const { return load_[server]; }
  size_t servers(Priority priority) const { return classes_[static_cast<size_t>(priority)].members.size(); }

 private:
  struct Class {
    std::vector<size_t> members;  // server indices, in routing order
    size_t leaves = 1;            // tree leaves: a power of two >= members
    std::vector<int> tree;        // min load per node; node 1 is the root, leaf k at leaves + k
    size_t round_robin = 0;
  };
  // The first member position >= from with load <= value, or members.size() if none.
  static size_t FirstAtMost(const Class& c, size_t from, int value);

  std::vector<int> load_;
  std::vector<size_t> position_;  // server -> position among its class's members
  std::vector<Priority> priority_;
  std::array<Class, 2> classes_;  // by Priority
};

}  // namespace wattcut::polca
