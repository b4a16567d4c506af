#include "wattcut/http/service_url.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace wattcut::http {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string ErrorOf(std::string_view url, const ServiceUrlForm& form = {}) {
  auto split = SplitServiceUrl(url, "agent URL", form);
  return split.ok() ? "accepted as " + split->url : split.error().message;
}

TEST(ServiceUrl, TheRowsFormNamesSchemeHostAndPort) {
  auto split = SplitServiceUrl("https://node2.example:443/", "agent URL");
  ASSERT_TRUE(split.ok()) << split.error().message;
  EXPECT_EQ(split->url, "https://node2.example:443");
  EXPECT_TRUE(split->https);
  EXPECT_EQ(split->host, "node2.example");
  EXPECT_EQ(split->port, "443");
  split = SplitServiceUrl("http://[fd00::12]:7788", "agent URL");
  ASSERT_TRUE(split.ok()) << split.error().message;
  EXPECT_FALSE(split->https);
  EXPECT_EQ(split->host, "fd00::12");
  EXPECT_EQ(split->port, "7788");
}

TEST(ServiceUrl, EachWayToGetItWrongIsNamed) {
  EXPECT_EQ(ErrorOf("ftp://h:1"),
            "agent URL 'ftp://h:1': expected http://HOST:PORT or https://HOST:PORT (the scheme "
            "is http or https)");
  EXPECT_THAT(ErrorOf("http://h"), HasSubstr("(no port)"));
  EXPECT_THAT(ErrorOf("http://[fd00::1]"), HasSubstr("(no port)"));
  EXPECT_THAT(ErrorOf("http://:7788"), HasSubstr("(no host)"));
  EXPECT_THAT(ErrorOf("http://"), HasSubstr("(no host)"));
  EXPECT_THAT(ErrorOf(""), HasSubstr("(the scheme is http or https)"));
  for (const char* port : {"0", "65536", "77x8", "", "000007788"}) {
    EXPECT_THAT(ErrorOf(std::string("http://h:") + port), HasSubstr("(a port of 1-65535)")) << port;
  }
  EXPECT_THAT(ErrorOf("http://h:7788/v1"), HasSubstr("(no path: the API is under /v1 of it)"));
  EXPECT_THAT(ErrorOf("http://h:7788//"), HasSubstr("(no path"));
  EXPECT_THAT(ErrorOf("http://h:7788?x=1"), HasSubstr("(no path"));
  EXPECT_THAT(ErrorOf("http://u@h:7788"), HasSubstr("the host holds '@'"));
  EXPECT_THAT(ErrorOf("http://h st:7788"), HasSubstr("the host holds ' '"));
  EXPECT_THAT(ErrorOf("http://[fd00::1:7788"), HasSubstr("(no ']')"));
  EXPECT_THAT(ErrorOf("http://[]:7788"), HasSubstr("(an empty IPv6 address)"));
  EXPECT_THAT(ErrorOf("http://[fd00::g]:7788"), HasSubstr("(a bad IPv6 address)"));
  EXPECT_THAT(ErrorOf("http://[fd00::1]7788"), HasSubstr("(':PORT' after ']')"));
  // Bytes that are not printable are shown escaped, never written raw into a message.
  EXPECT_THAT(ErrorOf("http://h\n:1"), Not(HasSubstr("\n")));
}

TEST(ServiceUrl, ThePlanServerFormIsPlainHttpWithPort80ByDefault) {
  auto split = SplitServiceUrl("http://planner.example", "wattcut server URL", kPlanServerUrlForm);
  ASSERT_TRUE(split.ok()) << split.error().message;
  EXPECT_EQ(split->url, "http://planner.example");
  EXPECT_EQ(split->host, "planner.example");
  EXPECT_EQ(split->port, "80");
  split = SplitServiceUrl("http://[::1]/", "wattcut server URL", kPlanServerUrlForm);
  ASSERT_TRUE(split.ok()) << split.error().message;
  EXPECT_EQ(split->host, "::1");
  EXPECT_EQ(split->port, "80");
  EXPECT_EQ(ErrorOf("https://planner.example:443", kPlanServerUrlForm),
            "agent URL 'https://planner.example:443': expected http://HOST[:PORT] (plain HTTP: https is not supported "
            "here; put a TLS proxy in front)");
  EXPECT_THAT(ErrorOf("planner.example:7787", kPlanServerUrlForm),
              HasSubstr("expected http://HOST[:PORT] (the scheme is http)"));
  EXPECT_THAT(ErrorOf("http://planner.example/wattcut", kPlanServerUrlForm), HasSubstr("(no path"));
}

}  // namespace
}  // namespace wattcut::http
