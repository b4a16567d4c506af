#include "wattcut/polca/server_event_queue.h"

#include <limits>

namespace wattcut::polca {

ServerEventQueue::ServerEventQueue(size_t servers) : heap_(servers), position_(servers) {
  for (size_t i = 0; i < servers; ++i) Place(i, {std::numeric_limits<double>::infinity(), static_cast<uint32_t>(i)});
}

void ServerEventQueue::Update(size_t server, double time_s) {
  size_t i = position_[server];
  if (heap_[i].time_s == time_s) return;  // position unchanged
  const Entry e{time_s, static_cast<uint32_t>(server)};
  // Up while the parent comes after, else down while the least child comes before.
  while (i > 0 && e < heap_[(i - 1) / 4]) {
    Place(i, heap_[(i - 1) / 4]);
    i = (i - 1) / 4;
  }
  const size_t n = heap_.size();
  while (true) {
    const size_t first = 4 * i + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t last = first + 4 < n ? first + 4 : n;
    for (size_t c = first + 1; c < last; ++c) {
      if (heap_[c] < heap_[best]) best = c;
    }
    if (!(heap_[best] < e)) break;
    Place(i, heap_[best]);
    i = best;
  }
  Place(i, e);
}

}  // namespace wattcut::polca
