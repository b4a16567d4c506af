#include "wattcut/polca/server_event_queue.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "wattcut/polca/random.h"

namespace wattcut::polca {
namespace {

// Random updates, times often equal: the top is always the earliest server, the lowest index
// among equal times, as a scan over every server finds it.
// The bucket width sets only the cost: buckets far narrower than the times' spread (every event
// many ring turns ahead, the walk falling back to a scan), about right, and far wider (everything
// in one bucket, or past the int64 clamp) give the same answers.
TEST(ServerEventQueue, TopIsTheEarliestLowestIndexServer) {
  for (uint64_t trial = 0; trial < 60; ++trial) {
    SplitMix64 rng(trial, 3);
    const size_t n = 1 + static_cast<size_t>(rng.Uniform() * 200);
    const double interval_s[] = {1e-4, 1.0, 1e6, 1e-18};
    ServerEventQueue queue(n, interval_s[trial % 4]);
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
