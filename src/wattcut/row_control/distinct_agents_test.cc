#include "wattcut/row_control/distinct_agents.h"

#include <gtest/gtest.h>

#include <map>

namespace wattcut::row_control {
namespace {

// Names resolve as this table says (numeric hosts as themselves): no /etc/hosts is read.
http::HostResolver Table(std::map<std::string, std::vector<std::string>> names) {
  return [names](const std::string& host, const std::string& port) -> Result<std::vector<http::SocketAddress>> {
    auto it = names.find(host);
    const std::vector<std::string> numeric = it != names.end() ? it->second : std::vector<std::string>{host};
    std::vector<http::SocketAddress> all;
    for (const std::string& address : numeric) {
      auto one = http::ResolveHost(address, port);
      if (!one.ok()) return one.error();
      all.insert(all.end(), one->begin(), one->end());
    }
    return all;
  };
}

std::vector<RowServer> Row(const std::string& text) {
  auto servers = ParseRowFile(text, "row.txt");
  EXPECT_TRUE(servers.ok()) << servers.error().message;
  return servers.ok() ? *servers : std::vector<RowServer>{};
}

TEST(DistinctAgents, TwoUrlsThatReachOneAgentAreRefusedNamingBothLines) {
  const auto resolver = Table({{"localhost", {"::1", "127.0.0.1"}}, {"gpu-a01", {"10.1.0.11"}}});
  auto same =
      CheckEachAgentOnce(Row("a http://127.0.0.1:7788 high\nb http://localhost:7788 low\n"), "row.txt", resolver);
  ASSERT_FALSE(same.ok());
  EXPECT_EQ(same.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(same.error().message,
            "row.txt:2: server 'b': agent http://localhost:7788 is the agent of line 1 (server 'a', "
            "http://127.0.0.1:7788): both reach 127.0.0.1:7788; its power would count twice");
  auto by_name =
      CheckEachAgentOnce(Row("a http://gpu-a01:7788 high\n# b\nb http://10.1.0.11:7788 low\n"), "row.txt", resolver);
  ASSERT_FALSE(by_name.ok());
  EXPECT_NE(by_name.error().message.find("row.txt:3: server 'b'"), std::string::npos) << by_name.error().message;
}

TEST(DistinctAgents, OneAgentPerPortOrAddressIsFine) {
  const auto resolver = Table({{"localhost", {"::1", "127.0.0.1"}}});
  EXPECT_TRUE(CheckEachAgentOnce(Row("a http://127.0.0.1:7788 high\nb http://127.0.0.1:7789 low\n"
                                     "c http://localhost:7790 low\nd http://10.1.0.12:7788 high\n"),
                                 "row.txt", resolver)
                  .ok());
}

TEST(DistinctAgents, AHostThatDoesNotResolveNamesItsLine) {
  http::HostResolver nothing = [](const std::string& host,
                                  const std::string&) -> Result<std::vector<http::SocketAddress>> {
    return Error::Unavailable("cannot resolve host '" + host + "': Name or service not known");
  };
  auto failed = CheckEachAgentOnce(Row("gpu-x http://gpu-x:7788 high\n"), "row.txt", nothing);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(
      failed.error().message,
      "row.txt:1: server 'gpu-x': agent http://gpu-x:7788: cannot resolve host 'gpu-x': Name or service not known");
}

}  // namespace
}  // namespace wattcut::row_control
