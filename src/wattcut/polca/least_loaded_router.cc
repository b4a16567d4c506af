#include "wattcut/polca/least_loaded_router.h"

namespace wattcut::polca {

LeastLoadedRouter::LeastLoadedRouter(const std::vector<Priority>& priorities) : servers_(priorities.size()) {
  for (size_t i = 0; i < priorities.size(); ++i) {
    Class& c = classes_[static_cast<size_t>(priorities[i])];
    servers_[i].position = static_cast<uint32_t>(c.members.size());
    servers_[i].priority = priorities[i];
    c.members.push_back(i);
  }
  for (Class& c : classes_) {
    c.words = (c.members.size() + 63) / 64;
    Grow(c, 0);
    for (size_t k = 0; k < c.members.size(); ++k) c.at_load[k / 64] |= uint64_t{1} << (k % 64);
    c.count[0] = static_cast<int>(c.members.size());
  }
}

void LeastLoadedRouter::Grow(Class& c, int load) {
  const size_t levels = static_cast<size_t>(load) + 1;
  if (c.count.size() >= levels) return;
  // Doubling, so a backlog that grows one request at a time costs amortized O(1) a request.
  size_t grown = c.count.empty() ? 1 : c.count.size();
  while (grown < levels) grown *= 2;
  c.count.resize(grown, 0);
  c.at_load.resize(grown * c.words, 0);
}

void LeastLoadedRouter::SetLoad(size_t server, int load) {
  Server& slot = servers_[server];
  const int old = slot.load;
  if (old == load) return;
  slot.load = load;
  Class& c = classes_[static_cast<size_t>(slot.priority)];
  Grow(c, load);
  const size_t k = slot.position;
  const uint64_t bit = uint64_t{1} << (k % 64);
  c.at_load[static_cast<size_t>(old) * c.words + k / 64] &= ~bit;
  c.at_load[static_cast<size_t>(load) * c.words + k / 64] |= bit;
  --c.count[static_cast<size_t>(old)];
  ++c.count[static_cast<size_t>(load)];
  if (load < c.least) {
    c.least = load;
  } else {
    while (c.count[static_cast<size_t>(c.least)] == 0) ++c.least;  // some member has a load
  }
}

size_t LeastLoadedRouter::FirstAt(const Class& c, size_t from, int load) {
  const size_t n = c.members.size();
  if (from >= n) return n;
  const uint64_t* bits = c.at_load.data() + static_cast<size_t>(load) * c.words;
  size_t w = from / 64;
  uint64_t word = bits[w] & (~uint64_t{0} << (from % 64));
  while (word == 0) {
    if (++w == c.words) return n;
    word = bits[w];
  }
  return w * 64 + static_cast<size_t>(__builtin_ctzll(word));
}

size_t LeastLoadedRouter::Route(Priority priority) {
  size_t cls = static_cast<size_t>(priority);
  if (classes_[cls].members.empty()) cls = 1 - cls;
  Class& c = classes_[cls];
  const size_t m = c.members.size();
  const size_t start = c.round_robin++ % m;
  size_t at = FirstAt(c, start, c.least);
  if (at == m) at = FirstAt(c, 0, c.least);  // wrapped around: there is one before start
  return c.members[at];
}

}  // namespace wattcut::polca
