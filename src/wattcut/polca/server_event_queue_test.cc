#include "wattcut/polca/server_event_queue.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "wattcut/polca/random.h"

namespace wattcut::polca {
namespace {

// Random updates, times often equal: the top is always the earliest server, the lowest index
// among equal times, as a scan over every server finds it.
TEST(ServerEventQueue, TopIsTheEarliestLowestIndexServer) {
  for (uint64_t trial = 0; trial < 50; ++trial) {
    SplitMix64 rng(trial, 3);
    const size_t n = 1 + static_cast<size_t>(rng.Uniform() * 200);
    ServerEventQueue queue(n);
    std::vector<double> time(n, std::numeric_limits<double>::infinity());
    for (int step = 0; step < 2000; ++step) {
      const size_t i = static_cast<size_t>(rng.Uniform() * static_cast<double>(n));
      const double u = rng.Uniform();
      time[i] = u < 0.1 ? std::numeric_limits<double>::infinity() : std::floor(u * 20);
      queue.Update(i, time[i]);
      size_t want = 0;
      for (size_t k = 1; k < n; ++k) {
        if (time[k] < time[want]) want = k;
      }
      ASSERT_EQ(queue.top(), want) << "trial " << trial << " step " << step;
      ASSERT_EQ(queue.top_time(), time[want]);
    }
  }
}

}  // namespace
}  // namespace wattcut::polca
