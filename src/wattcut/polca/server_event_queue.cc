#include "wattcut/polca/server_event_queue.h"

#include <limits>
#include <utility>

namespace wattcut::polca {

ServerEventQueue::ServerEventQueue(size_t servers)
    : time_(servers, std::numeric_limits<double>::infinity()), heap_(servers), position_(servers) {
  for (size_t i = 0; i < servers; ++i) heap_[i] = position_[i] = i;
}

void ServerEventQueue::Swap(size_t i, size_t j) {
  std::swap(heap_[i], heap_[j]);
  position_[heap_[i]] = i;
  position_[heap_[j]] = j;
}

void ServerEventQueue::Update(size_t server, double time_s) {
  if (time_[server] == time_s) return;  // position unchanged
  time_[server] = time_s;
  size_t i = position_[server];
  while (i > 0 && Before(heap_[i], heap_[(i - 1) / 2])) {
    Swap(i, (i - 1) / 2);
    i = (i - 1) / 2;
  }
  const size_t n = heap_.size();
  while (true) {
    size_t l = 2 * i + 1, r = l + 1, best = i;
    if (l < n && Before(heap_[l], heap_[best])) best = l;
    if (r < n && Before(heap_[r], heap_[best])) best = r;
    if (best == i) break;
    Swap(i, best);
    i = best;
  }
}

}  // namespace wattcut::polca
