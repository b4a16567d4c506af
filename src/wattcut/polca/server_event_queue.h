// The servers' next event times as an indexed 4-ary min-heap: the earliest server in O(1), a
// server's time changed in O(log n). Ties go to the lower server index, so the simulation order
// is deterministic (and the same as any other heap's: the order is total). The keys live in the
// heap's own entries, so a sift touches one contiguous array (a 2,560-server row's heap is
// 40 KB), four children per node halve the depth of a binary heap, and a later time sinks as a
// hole to a leaf before it climbs (Floyd's way: one comparison a level fewer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wattcut::polca {

class ServerEventQueue {
 public:
  explicit ServerEventQueue(size_t servers);

  size_t top() const { return heap_[0].server; }
  double top_time() const { return heap_[0].time_s; }
  void Update(size_t server, double time_s);

 private:
  struct Entry {
    double time_s;
    uint32_t server;
    bool operator<(const Entry& o) const { return time_s < o.time_s || (time_s == o.time_s && server < o.server); }
  };
  void Place(size_t at, const Entry& e) {
    heap_[at] = e;
    position_[e.server] = static_cast<uint32_t>(at);
  }

  std::vector<Entry> heap_;
  std::vector<uint32_t> position_;  // server -> heap position
};

}  // namespace wattcut::polca
