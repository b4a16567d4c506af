// Routing of a row's requests: each goes to the least-loaded server of its priority class (fewest
// outstanding requests); among the least loaded, the first in the class's order starting from a
// position that moves on by one per request (round robin), wrapping around.
//
// The answer is the one a scan over every server of the class gives, but found without one: each
// class keeps, per load, a bitset of the members at that load (by position) and a count, and its
// least load. A load change moves one bit (O(1)); a request takes the least load's next set bit
// from the round-robin position, a word (64 members) at a time. The scan made a day grow as
// servers x requests; a min tree over the members (before this) as log(servers) x requests.
// row_simulator_fingerprint_test pins the simulator's answers from before either,
// least_loaded_router_test checks it against the scan.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "wattcut/polca/arrival_source.h"

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

  int load(size_t server) const { return servers_[server].load; }
  size_t servers(Priority priority) const { return classes_[static_cast<size_t>(priority)].members.size(); }

 private:
  struct Class {
    std::vector<size_t> members;  // server indices, in routing order
    size_t words = 0;             // 64-bit words of a bitset over the members
    // at_load[l]: bit k set when member k has load l (words_ per load, loads as they occur).
    std::vector<uint64_t> at_load;
    std::vector<int> count;  // members at each load
    int least = 0;           // the least load of any member
    size_t round_robin = 0;
  };
  // The first member position >= from with load `load`, or members.size() if none.
  static size_t FirstAt(const Class& c, size_t from, int load);
  static void Grow(Class& c, int load);

  // What a load change reads of its server, in one place (one cache miss, not three).
  struct Server {
    int load = 0;
    uint32_t position = 0;  // among its class's members
    Priority priority = Priority::kHigh;
  };

  std::vector<Server> servers_;
  std::array<Class, 2> classes_;  // by Priority
};

}  // namespace wattcut::polca
