#include "wattcut/polca/server_event_queue.h"

#include <limits>

namespace wattcut::polca {

ServerEventQueue::ServerEventQueue(size_t servers) : heap_(servers), position_(servers) {
  for (size_t i = 0; i < servers; ++i) Place(i, {std::numeric_limits<double>::infinity(), static_cast<uint32_t>(i)});
}

void ServerEventQueue::Update(size_t server, double time_s) {
  size_t i = position_[server];
  const double before_s = heap_[i].time_s;
  if (before_s == time_s) return;  // position unchanged
  const Entry e{time_s, static_cast<uint32_t>(server)};
  const size_t n = heap_.size();
  auto least_child = [&](size_t first) {
    size_t best = first;
    const size_t last = first + 4 < n ? first + 4 : n;
    for (size_t c = first + 1; c < last; ++c) {
      if (heap_[c] < heap_[best]) best = c;
    }
    return best;
  };
  if (time_s > before_s) {
    // Later (the common case: the earliest server's next event): the hole goes down to a leaf along
    // the least children, then `e` climbs back up. A server's next event is among the latest, so
    // it climbs little, and the way down saves the comparison with `e` at every level.
    for (size_t first = 4 * i + 1; first < n; first = 4 * i + 1) {
      const size_t best = least_child(first);
      Place(i, heap_[best]);
      i = best;
    }
  }
  // Up while the parent comes after: from that leaf, or from where it was for an earlier time (an
  // earlier time never needs to go down).
  while (i > 0 && e < heap_[(i - 1) / 4]) {
    Place(i, heap_[(i - 1) / 4]);
    i = (i - 1) / 4;
  }
  Place(i, e);
}

}  // namespace wattcut::polca
