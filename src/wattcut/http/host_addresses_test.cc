// ResolveHost on numeric addresses (a name's addresses depend on the machine's /etc/hosts and
// resolver, which a test must not: ConcurrentRequests' tests inject theirs).
#include "wattcut/http/host_addresses.h"

#include <gtest/gtest.h>

namespace wattcut::http {
namespace {

TEST(HostAddresses, ANumericAddressIsItsOneAddress) {
  auto v4 = ResolveHost("127.0.0.2", "7788");
  ASSERT_TRUE(v4.ok()) << v4.error().message;
  ASSERT_EQ(v4->size(), 1u);
  EXPECT_EQ((*v4)[0].family(), AF_INET);
  EXPECT_EQ((*v4)[0].Text(), "127.0.0.2:7788");

  auto v6 = ResolveHost("::1", "80");
  ASSERT_TRUE(v6.ok()) << v6.error().message;
  ASSERT_EQ(v6->size(), 1u);
  EXPECT_EQ((*v6)[0].family(), AF_INET6);
  EXPECT_EQ((*v6)[0].Text(), "[::1]:80");
}

TEST(HostAddresses, APortThatIsNotANumberIsRefusedWithTheHostNamed) {
  auto named = ResolveHost("127.0.0.1", "http");  // service names are not looked up
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(named.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(named.error().message.rfind("cannot resolve host '127.0.0.1': ", 0), 0u) << named.error().message;
}

}  // namespace
}  // namespace wattcut::http
