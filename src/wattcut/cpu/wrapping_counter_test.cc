#include "wattcut/cpu/wrapping_counter.h"

#include <gtest/gtest.h>

namespace wattcut::cpu {
namespace {

TEST(WrappingCounter, StartsAtTheFirstReadingAndAddsEachStep) {
  WrappingCounter c(1000);
  EXPECT_EQ(c.Widen(400), 400);
  EXPECT_EQ(c.Widen(400), 400);
  EXPECT_EQ(c.Widen(650), 650);
  EXPECT_EQ(c.wraps(), 0);
}

TEST(WrappingCounter, AReadingThatWentDownWrappedOnce) {
  WrappingCounter c(1000);
  c.Widen(900);
  EXPECT_EQ(c.Widen(50), 1050);        // 100 to the range's end, 50 after it
  EXPECT_EQ(c.Widen(0), 1000 + 1000);  // a second wrap: 950 to the end, then 0
  EXPECT_EQ(c.Widen(1000), 3000);
  EXPECT_EQ(c.wraps(), 2);
}

TEST(WrappingCounter, NeverGoesDownOverManyWraps) {
  WrappingCounter c(262'143'328'850);  // a typical package range (uJ)
  const int64_t first = 123;
  int64_t last = c.Widen(first), raw = first;
  for (int i = 0; i < 1000; ++i) {
    raw = (raw + 97'000'000'000) % 262'143'328'850;  // 97 kJ a step, less than the range
    const int64_t wide = c.Widen(raw);
    ASSERT_GE(wide, last);
    last = wide;
  }
  EXPECT_EQ(last, first + 1000 * int64_t{97'000'000'000});  // every step counted exactly
  EXPECT_GT(c.wraps(), 300);
}

}  // namespace
}  // namespace wattcut::cpu
