// The servers' next event times as an indexed binary min-heap: the earliest server in
// O(1), a server's time changed in O(log n). Ties go to the lower server index, so the
// simulation order is deterministic.
#pragma once

#include <cstddef>
#include <vector>

namespace wattcut::polca {

class ServerEventQueue {
 public:
  explicit ServerEventQueue(size_t servers);

  size_t top() const { return heap_[0]; }
  double top_time() const { return time_[heap_[0]]; }
  void Update(size_t server, double time_s);

 private:
  bool Before(size_t a, size_t b) const { return time_[a] < time_[b] || (time_[a] == time_[b] && a < b); }
  void Swap(size_t i, size_t j);

  std::vector<double> time_;
  std::vector<size_t> heap_;      // heap position -> server
  std::vector<size_t> position_;  // server -> heap position
};

}  // namespace wattcut::polca
