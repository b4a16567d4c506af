#include "wattcut/base/huge_page_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace wattcut {
namespace {

TEST(HugePageAllocator, SmallBlocksAreOrdinaryAndLargeOnesStartOnAHugePage) {
  HugePageAllocator<double> alloc;
  double* small = alloc.allocate(100);
  for (int i = 0; i < 100; ++i) small[i] = i;
  EXPECT_EQ(small[99], 99);
  alloc.deallocate(small, 100);

  const size_t n = 3 * huge_pages::kBytes / sizeof(double) + 5;  // not a whole number of huge pages
  double* large = alloc.allocate(n);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % huge_pages::kBytes, 0u);
  for (size_t i = 0; i < n; ++i) large[i] = static_cast<double>(i);  // every byte is writable
  EXPECT_EQ(large[n - 1], static_cast<double>(n - 1));
  alloc.deallocate(large, n);
}

TEST(HugePageAllocator, AVectorGrowsAcrossTheThresholdAndKeepsItsValues) {
  std::vector<int64_t, HugePageAllocator<int64_t>> v;
  const int64_t count = 3 * static_cast<int64_t>(huge_pages::kBytes / sizeof(int64_t));
  for (int64_t i = 0; i < count; ++i) v.push_back(i * 7);
  for (int64_t i = 0; i < count; i += 4099) ASSERT_EQ(v[static_cast<size_t>(i)], i * 7);
  std::vector<int64_t, HugePageAllocator<int64_t>> moved = std::move(v);
  EXPECT_EQ(moved.back(), (count - 1) * 7);
  moved.clear();
  moved.shrink_to_fit();  // back below the threshold: ordinary memory again
  moved.push_back(1);
  EXPECT_EQ(moved.size(), 1u);
  EXPECT_TRUE(HugePageAllocator<int>() == HugePageAllocator<double>());
}

}  // namespace
}  // namespace wattcut
