#include "wattcut/http/descriptor_limit.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

namespace wattcut::http {
namespace {

TEST(DescriptorLimit, TheSoftLimitIsRaisedToTheHardOne) {
  const DescriptorLimit limit = RaiseDescriptorLimit();
  rlimit now{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &now), 0);
  EXPECT_EQ(limit.soft, static_cast<uint64_t>(now.rlim_cur));
  EXPECT_EQ(limit.hard, static_cast<uint64_t>(now.rlim_max));
  EXPECT_EQ(limit.soft, std::min<uint64_t>(limit.hard, uint64_t{1} << 20));
}

TEST(DescriptorLimit, WarnsOnlyWhenTheConnectionsDoNotFit) {
  const DescriptorLimit limit{4096, 4096};
  EXPECT_FALSE(DescriptorLimitWarning(limit, 4096, "--max-long-polls 3840").has_value());
  auto warning = DescriptorLimitWarning(limit, 16640, "--max-long-polls 16384");
  ASSERT_TRUE(warning.has_value());
  EXPECT_EQ(*warning,
            "the open-file limit (4096, hard 4096) is below the 16640 descriptors --max-long-polls 16384 may hold: "
            "connections beyond it are refused by the kernel (raise LimitNOFILE= or ulimit -n)");
}

}  // namespace
}  // namespace wattcut::http
