#include "wattcut/polca/server_event_queue.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "wattcut/polca/random.h"

namespace wattcut::polca {
namespace {

// What the queue's top must be: the earliest time, the lowest index among equal ones.
size_t EarliestByScan(const std::vector<double>& time) {
  size_t earliest = 0;
  for (size_t k = 1; k < time.size(); ++k) {
    if (time[k] < time[earliest]) earliest = k;
  }
  return earliest;
}

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
      const size_t want = EarliestByScan(time);
      ASSERT_EQ(queue.top(), want) << "trial " << trial << " step " << step;
      ASSERT_EQ(queue.top_time(), time[want]);
    }
  }
}

// A simulation's pattern, long enough for the width to be checked many times: the earliest
// server's event is handled and its next lies some way ahead, sometimes none (idle), sometimes a
// woken server's. How far ahead jumps between 1,000 times the width the queue was built for and
// a thousandth of it, so the queue re-buckets both ways; the top is always the scan's.
TEST(ServerEventQueue, FollowsTheEventsWhenTheyMoveFartherOrNearer) {
  constexpr size_t n = 48;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  ServerEventQueue queue(n, 1.0);
  std::vector<double> time(n, kInf);
  SplitMix64 rng(7, 11);
  for (size_t i = 0; i < n; i += 2) {
    time[i] = rng.Uniform();
    queue.Update(i, time[i]);
  }
  double now = 0;
  const double mean_ahead_s[] = {1000.0, 1e-3, 30.0, 1.0};
  for (double ahead : mean_ahead_s) {
    for (int step = 0; step < 150'000; ++step) {
      size_t i = queue.top();
      if (time[i] == kInf || rng.Uniform() < 0.05) {
        i = static_cast<size_t>(rng.Uniform() * static_cast<double>(n));  // an arrival wakes any server
      } else {
        now = time[i];
      }
      const double u = rng.Uniform();
      time[i] = u < 0.02 ? kInf : now + ahead * -std::log(1 - u);
      queue.Update(i, time[i]);
      const size_t want = EarliestByScan(time);
      ASSERT_EQ(queue.top(), want) << "ahead " << ahead << " step " << step;
      ASSERT_EQ(queue.top_time(), time[want]);
    }
    // The ring spans about four mean times ahead (within the factor of two it tolerates).
    EXPECT_GT(queue.ring_span_s(), 1.5 * ahead);
    EXPECT_LT(queue.ring_span_s(), 10 * ahead);
  }
}

}  // namespace
}  // namespace wattcut::polca
