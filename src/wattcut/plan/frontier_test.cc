#include "wattcut/plan/frontier.h"

#include <gtest/gtest.h>

namespace wattcut {
namespace {

TEST(Frontier, Placeholder) {}

}  // namespace
}  // namespace wattcut
