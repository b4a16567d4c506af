#include "wattcut/polca/least_loaded_router.h"

#include <gtest/gtest.h>

#include "wattcut/polca/random.h"

namespace wattcut::polca {
namespace {

// The routing rule as the simulator wrote it before the tree: from the round-robin position,
// the first server strictly less loaded than every one before it, stopping at an idle one.
class ScanRouter {
 public:
  explicit ScanRouter(const std::vector<Priority>& priorities) : load_(priorities.size(), 0) {
    for (size_t i = 0; i < priorities.size(); ++i) pool_[static_cast<size_t>(priorities[i])].push_back(i);
  }
  size_t Route(Priority priority) {
    size_t cls = static_cast<size_t>(priority);
    if (pool_[cls].empty()) cls = 1 - cls;
    const std::vector<size_t>& members = pool_[cls];
    const size_t m = members.size();
    size_t start = round_robin_[cls]++ % m;
    size_t best = members[start];
    int best_load = load_[best];
    for (size_t k = 1; k < m && best_load > 0; ++k) {
      size_t candidate = members[(start + k) % m];
      if (load_[candidate] < best_load) {
        best = candidate;
        best_load = load_[candidate];
      }
    }
    return best;
  }
  void SetLoad(size_t server, int load) { load_[server] = load; }

 private:
  std::vector<int> load_;
  std::array<std::vector<size_t>, 2> pool_;
  std::array<size_t, 2> round_robin_{0, 0};
};

// Random rows (sizes 1 to 300, either class possibly empty) under random arrivals and
// departures, loads jumping by more than one at times: the tree routes every request where the
// scan does.
TEST(LeastLoadedRouter, RoutesEveryRequestWhereTheScanDoes) {
  for (uint64_t trial = 0; trial < 200; ++trial) {
    SplitMix64 rng(trial, 28);
    const size_t n = 1 + static_cast<size_t>(rng.Uniform() * (trial < 20 ? 8 : 300));
    const double low_share = trial % 7 == 0 ? 0.0 : trial % 7 == 1 ? 1.0 : rng.Uniform();
    std::vector<Priority> priorities;
    for (size_t i = 0; i < n; ++i) priorities.push_back(rng.Uniform() < low_share ? Priority::kLow : Priority::kHigh);
    LeastLoadedRouter tree(priorities);
    ScanRouter scan(priorities);
    std::vector<int> load(n, 0);
    for (int step = 0; step < 3000; ++step) {
      if (rng.Uniform() < 0.55) {
        const Priority p = rng.Uniform() < 0.5 ? Priority::kLow : Priority::kHigh;
        const size_t want = scan.Route(p);
        const size_t got = tree.Route(p);
        ASSERT_EQ(got, want) << "trial " << trial << " step " << step << " servers " << n;
        ++load[got];
      } else {
        const size_t i = static_cast<size_t>(rng.Uniform() * static_cast<double>(n));
        const int leave = rng.Uniform() < 0.1 ? 3 : 1;
        load[i] = std::max(0, load[i] - leave);
      }
      for (size_t i = 0; i < n; ++i) {
        if (tree.load(i) != load[i]) {
          tree.SetLoad(i, load[i]);
          scan.SetLoad(i, load[i]);
        }
      }
    }
  }
}

TEST(LeastLoadedRouter, CountsEachClassAndFallsBackToTheOther) {
  LeastLoadedRouter router({Priority::kHigh, Priority::kHigh});
  EXPECT_EQ(router.servers(Priority::kHigh), 2u);
  EXPECT_EQ(router.servers(Priority::kLow), 0u);
  EXPECT_EQ(router.Route(Priority::kLow), 0u);  // round robin among equals
  router.SetLoad(0, 1);
  EXPECT_EQ(router.Route(Priority::kLow), 1u);
  router.SetLoad(1, 2);
  EXPECT_EQ(router.Route(Priority::kHigh), 0u);  // least loaded, whatever the position
}

}  // namespace
}  // namespace wattcut::polca
