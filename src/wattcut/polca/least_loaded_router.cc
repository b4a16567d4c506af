#include "wattcut/polca/least_loaded_router.h"

#include <algorithm>
#include <limits>

namespace wattcut::polca {
namespace {
constexpr int kNoServer = std::numeric_limits<int>::max();
}

LeastLoadedRouter::LeastLoadedRouter(const std::vector<Priority>& priorities)
    : load_(priorities.size(), 0), position_(priorities.size(), 0), priority_(priorities) {
  for (size_t i = 0; i < priorities.size(); ++i) {
    Class& c = classes_[static_cast<size_t>(priorities[i])];
    position_[i] = c.members.size();
    c.members.push_back(i);
  }
  for (Class& c : classes_) {
    while (c.leaves < c.members.size()) c.leaves *= 2;
    c.tree.assign(2 * c.leaves, kNoServer);
    for (size_t k = 0; k < c.members.size(); ++k) c.tree[c.leaves + k] = 0;
    for (size_t node = c.leaves - 1; node >= 1; --node) {
      c.tree[node] = std::min(c.tree[2 * node], c.tree[2 * node + 1]);
    }
  }
}

void LeastLoadedRouter::SetLoad(size_t server, int load) {
  if (load_[server] == load) return;
  load_[server] = load;
  Class& c = classes_[static_cast<size_t>(priority_[server])];
  size_t node = c.leaves + position_[server];
  c.tree[node] = load;
  for (node /= 2; node >= 1; node /= 2) {
    const int m = std::min(c.tree[2 * node], c.tree[2 * node + 1]);
    if (c.tree[node] == m) break;  // nothing above changes
    c.tree[node] = m;
  }
}

size_t LeastLoadedRouter::FirstAtMost(const Class& c, size_t from, int value) {
  const size_t n = c.members.size();
  if (from >= n) return n;
  // Climb from the leaf at `from` until a subtree to the right of the path holds a match, then
  // descend into its leftmost match.
  size_t node = c.leaves + from;
  if (c.tree[node] <= value) return from;
  while (true) {
    // Move to the next subtree to the right: up while we are a right child, then across.
    while (node % 2 == 1) {
      node /= 2;
      if (node == 0) return n;
    }
    ++node;
    if (c.tree[node] <= value) break;
  }
  while (node < c.leaves) node = c.tree[2 * node] <= value ? 2 * node : 2 * node + 1;
  const size_t at = node - c.leaves;
  return at < n ? at : n;
}

size_t LeastLoadedRouter::Route(Priority priority) {
  size_t cls = static_cast<size_t>(priority);
  if (classes_[cls].members.empty()) cls = 1 - cls;
  Class& c = classes_[cls];
  const size_t m = c.members.size();
  const size_t start = c.round_robin++ % m;
  const int least = c.tree[1];
  size_t at = FirstAtMost(c, start, least);
  if (at == m) at = FirstAtMost(c, 0, least);  // wrapped around: there is one before start
  return c.members[at];
}

}  // namespace wattcut::polca
