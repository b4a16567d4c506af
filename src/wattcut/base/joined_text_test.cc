#include "wattcut/base/joined_text.h"

#include <gtest/gtest.h>

namespace wattcut {
namespace {

TEST(Joined, PutsTheSeparatorBetweenItemsOnly) {
  EXPECT_EQ(Joined({}, ", "), "");
  EXPECT_EQ(Joined({"a"}, ", "), "a");
  EXPECT_EQ(Joined({"a", "b", "c"}, "; "), "a; b; c");
}

}  // namespace
}  // namespace wattcut
