// zeusd's API on the agent (agent/zeusd_routes.h) as zeusd's documentation describes it, over the
// Unix socket and TCP: discovery, the GPU and CPU reads with zeusd's units and shapes, its device
// lists and their errors, the group gate, and its JWTs (none, bad signature, expired, missing
// scope, good). The CPU counters come from a powercap tree the test writes (a wrap, a package
// without DRAM).
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "tests/agent/agent_test_service.h"
#include "wattcut/agent/reading_streams.h"
#include "wattcut/agent/zeusd_token.h"
#include "wattcut/cpu/rapl_tree_testing.h"
#include "wattcut/http/http_client.h"

namespace wattcut {
namespace {

using nlohmann::json;

std::unique_ptr<http::HttpClient> Client(const std::string& socket, const std::string& base_url = "",
                                         const std::string& token = "") {
  http::HttpEndpoint e;
  e.unix_socket = socket;
  e.base_url = base_url;
  e.bearer_token = token;
  auto client = http::HttpClient::Create(e);
  EXPECT_TRUE(client.ok());
  return std::move(*client);
}

http::HttpResponse Call(http::HttpClient& c, const std::string& method, const std::string& path) {
  auto r = c.Request(method, path);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : http::HttpResponse{};
}

json Json(const http::HttpResponse& r) { return json::parse(r.body, nullptr, false); }

// Polls `done` every 10 ms for at most `max_s` seconds; whether it came.
bool Eventually(const std::function<bool()>& done, double max_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(max_s);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

int64_t NowS() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class ZeusdApiTest : public ::testing::Test {
 protected:
  ZeusdApiTest() : tree_("zeusd_api") {
    package0_ = tree_.AddPackage(0, 1'000'000, 990'000);
    dram0_ = tree_.AddSubzone(0, 1, "dram", 2'000'000, 700);
    tree_.AddSubzone(0, 0, "core", 1'000'000, 5);
    package1_ = tree_.AddPackage(1, 1'000'000, 10);
  }
  void StartAgent(const std::string& key_file = "",
                  std::vector<agent::ZeusdGroup> groups = {agent::ZeusdGroup::kGpuRead, agent::ZeusdGroup::kCpuRead},
                  double grace_s = 10) {
    agent::AgentServiceOptions options;
    options.node.zeusd_reconnect_grace_s = grace_s;
    options.powercap_root = tree_.root();
    options.zeusd_groups = groups;
    options.zeusd_signing_key_file = key_file;
    options.tcp_host = "127.0.0.1";
    options.tcp_port = 0;
    agent_.Start(nullptr, options);
  }
  std::string TcpUrl() { return "http://127.0.0.1:" + std::to_string(agent_.service()->tcp_port()); }
  // A signing key file with `bytes`, mode 0600, in the agent's folder.
  std::string WriteKey(const std::string& bytes) {
    const std::string path = agent_.folder() + "/zeusd.key";
    std::ofstream(path, std::ios::trunc) << bytes;
    std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return path;
  }

  cpu::testing::RaplTestTree tree_;
  std::string package0_, dram0_, package1_;
  testing::AgentTestService agent_{2};
};

TEST_F(ZeusdApiTest, DiscoversGpusCpusAndGroupsAsZeusdDoes) {
  StartAgent();
  for (bool tcp : {false, true}) {
    auto client = tcp ? Client("", TcpUrl()) : Client(agent_.socket_path());
    auto r = Call(*client, "GET", "/discover");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.content_type, "application/json");
    json d = Json(r);
    ASSERT_EQ(d["gpus"].size(), 2u);
    EXPECT_EQ(d["gpus"][1]["id"], 1);
    EXPECT_TRUE(d["gpus"][0]["name"].is_string());
    EXPECT_TRUE(d["gpus"][0].contains("pci_address"));
    EXPECT_EQ(d["gpus"][0]["cumulative_energy_available"], true);
    EXPECT_EQ(d["cpus"], json::parse(R"([{"id":0,"dram_available":true},{"id":1,"dram_available":false}])"));
    EXPECT_EQ(d["enabled_api_groups"], json::parse(R"(["gpu-read","cpu-read"])"));
    EXPECT_EQ(d["auth_required"], false);
    auto t = Json(Call(*client, "GET", "/time"));
    EXPECT_NEAR(static_cast<double>(t["timestamp_ms"].get<int64_t>()) / 1000, static_cast<double>(NowS()), 5);
  }
}

TEST_F(ZeusdApiTest, ReadsGpusInZeusdsUnitsAndRefusesBadDeviceLists) {
  StartAgent();
  auto c = Client(agent_.socket_path());
  json power = Json(Call(*c, "GET", "/gpu/get_power"));
  ASSERT_TRUE(power["power_mw"]["0"].is_number_integer()) << power;
  EXPECT_GT(power["power_mw"]["0"].get<int64_t>(), 10'000);  // milliwatts: a GPU draws tens of watts or more
  EXPECT_TRUE(power["timestamp_ms"].is_number_integer());
  json energy = Json(Call(*c, "GET", "/gpu/get_cumulative_energy?gpu_ids=1"));
  EXPECT_FALSE(energy.contains("0"));
  EXPECT_TRUE(energy["1"]["energy_mj"].is_number_integer()) << energy;
  json limits = Json(Call(*c, "GET", "/gpu/get_power_limit?gpu_ids=1%2C0"));  // httpx's encoded comma
  EXPECT_EQ(limits["0"]["power_limit_mw"], agent_.service()->node().gpus()[0].power_limits->default_mw) << limits;
  json constraints = Json(Call(*c, "GET", "/gpu/get_power_limit_constraints?gpu_ids=0,1,1"));
  EXPECT_LT(constraints["0"]["min_power_limit_mw"].get<int64_t>(),
            constraints["0"]["max_power_limit_mw"].get<int64_t>());
  EXPECT_EQ(constraints.size(), 2u);

  auto out_of_range = Call(*c, "GET", "/gpu/get_power?gpu_ids=5");
  EXPECT_EQ(out_of_range.status, 400);
  EXPECT_EQ(Json(out_of_range)["error"], "GPU 5 not found");
  EXPECT_EQ(Json(Call(*c, "GET", "/gpu/get_power?gpu_ids=0,,1"))["error"], "gpu_ids contains an empty GPU index");
  EXPECT_EQ(Json(Call(*c, "GET", "/gpu/get_power?gpu_ids=x"))["error"], "Invalid GPU index: x");
  EXPECT_EQ(Json(Call(*c, "GET", "/gpu/get_power?gpu_ids="))["error"], "gpu_ids must contain at least one GPU index");
  auto unknown = Call(*c, "GET", "/gpu/get_power?gpu_id=0");
  EXPECT_EQ(unknown.status, 400);
  EXPECT_EQ(unknown.content_type, "text/plain; charset=utf-8");
  EXPECT_EQ(unknown.body.rfind("Query deserialize error: unknown field `gpu_id`", 0), 0u) << unknown.body;
  EXPECT_EQ(Call(*c, "POST", "/gpu/get_power").status, 404);  // zeusd's routes have one method each
}

TEST_F(ZeusdApiTest, ReadsCpuAndDramEnergyAcrossAWrap) {
  StartAgent();
  auto c = Client(agent_.socket_path());
  json first = Json(Call(*c, "GET", "/cpu/get_cumulative_energy?cpu=true&dram=true"));
  EXPECT_EQ(first["0"]["cpu_energy_uj"], 990'000) << first;
  EXPECT_EQ(first["0"]["dram_energy_uj"], 700);
  EXPECT_TRUE(first["1"]["dram_energy_uj"].is_null());       // no DRAM zone: null, not an error
  cpu::testing::RaplTestTree::SetEnergy(package0_, 40'000);  // wrapped past 1,000,000
  json wrapped = Json(Call(*c, "GET", "/cpu/get_cumulative_energy?cpu=true&dram=false&cpu_ids=0"));
  EXPECT_EQ(wrapped["0"]["cpu_energy_uj"], 1'040'000) << wrapped;
  EXPECT_TRUE(wrapped["0"]["dram_energy_uj"].is_null());
  EXPECT_FALSE(wrapped.contains("1"));
  auto missing = Call(*c, "GET", "/cpu/get_cumulative_energy?cpu=true");
  EXPECT_EQ(missing.status, 400);
  EXPECT_NE(missing.body.find("missing field `dram`"), std::string::npos);
  auto not_bool = Call(*c, "GET", "/cpu/get_cumulative_energy?cpu=yes&dram=true");
  EXPECT_EQ(not_bool.status, 400);
  EXPECT_NE(not_bool.body.find("was not `true` or `false`"), std::string::npos);
  EXPECT_EQ(Json(Call(*c, "GET", "/cpu/get_power?cpu_ids=2"))["error"], "CPU 2 not found");
  json power = Json(Call(*c, "GET", "/cpu/get_power"));
  EXPECT_TRUE(power["power_mw"]["0"]["cpu_mw"].is_number_integer()) << power;
  EXPECT_TRUE(power["power_mw"]["0"]["dram_mw"].is_number_integer());
  EXPECT_TRUE(power["power_mw"]["1"]["dram_mw"].is_null());
  // An unreadable counter: every asked package's error, 500.
  cpu::testing::RaplTestTree::Write(package1_ + "/energy_uj", "garbage");
  auto broken = Call(*c, "GET", "/cpu/get_cumulative_energy?cpu=true&dram=true&cpu_ids=1");
  EXPECT_EQ(broken.status, 500);
  EXPECT_NE(Json(broken)["errors"]["1"].get<std::string>().find(package1_ + "/energy_uj"), std::string::npos);
}

TEST_F(ZeusdApiTest, WithoutRaplOrAGroupTheGroupIsOffAndSaysSo) {
  agent::AgentServiceOptions options;
  options.powercap_root = agent_.folder() + "/no-powercap";
  options.zeusd_groups = {agent::ZeusdGroup::kGpuRead, agent::ZeusdGroup::kCpuRead};
  agent_.Start(nullptr, options);
  auto c = Client(agent_.socket_path());
  json d = Json(Call(*c, "GET", "/discover"));
  EXPECT_TRUE(d["cpus"].empty());
  EXPECT_EQ(d["enabled_api_groups"], json::parse(R"(["gpu-read"])"));
  auto cpu = Call(*c, "GET", "/cpu/get_power");
  EXPECT_EQ(cpu.status, 404);
  EXPECT_EQ(Json(cpu)["error"], "API group 'cpu-read' is not enabled on this server.");
  auto control = Call(*c, "POST", "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&block=true");
  EXPECT_EQ(control.status, 404);
  EXPECT_EQ(Json(control)["error"], "API group 'gpu-control' is not enabled on this server.");
  EXPECT_EQ(Json(Call(*c, "GET", "/auth/whoami"))["error"], "Authentication is not enabled on this server.");
}

TEST_F(ZeusdApiTest, TokensAreCheckedAsZeusdChecksThem) {
  const std::string key_file = WriteKey("the node's secret\n");
  StartAgent(key_file);
  auto key = agent::ZeusdSigningKey::FromBytes("the node's secret\n");
  const std::string reader = agent::IssueZeusdToken({"alice", {agent::ZeusdGroup::kGpuRead}, NowS() + 3600}, *key);
  const std::string expired = agent::IssueZeusdToken({"alice", {agent::ZeusdGroup::kGpuRead}, NowS() - 120}, *key);
  const std::string forged = agent::IssueZeusdToken({"alice", {agent::ZeusdGroup::kGpuRead}, std::nullopt},
                                                    *agent::ZeusdSigningKey::FromBytes("x"));
  for (bool tcp : {false, true}) {
    SCOPED_TRACE(tcp ? "tcp" : "unix socket");
    auto with = [&](const std::string& token) {
      return tcp ? Client("", TcpUrl(), token) : Client(agent_.socket_path(), "", token);
    };
    auto none = with("");
    json d = Json(Call(*none, "GET", "/discover"));  // no token needed
    EXPECT_EQ(d["auth_required"], true);
    auto refused = Call(*none, "GET", "/gpu/get_power");
    EXPECT_EQ(refused.status, 401);
    EXPECT_EQ(Json(refused)["error"], "Authentication required. Provide an Authorization: Bearer <token> header.");
    EXPECT_EQ(Json(Call(*with(forged), "GET", "/gpu/get_power"))["error"], "Invalid token: InvalidSignature");
    auto old = Call(*with(expired), "GET", "/gpu/get_power");
    EXPECT_EQ(old.status, 401);
    EXPECT_EQ(Json(old)["error"], "Token has expired.");
    auto good = with(reader);
    EXPECT_EQ(Call(*good, "GET", "/gpu/get_power").status, 200);
    auto scope = Call(*good, "GET", "/cpu/get_cumulative_energy?cpu=true&dram=true");
    EXPECT_EQ(scope.status, 403);
    EXPECT_EQ(Json(scope)["error"],
              "Token for user 'alice' lacks required scope 'cpu-read'. Token scopes: ['gpu-read']");
    json me = Json(Call(*good, "GET", "/auth/whoami"));
    EXPECT_EQ(me["sub"], "alice");
    EXPECT_EQ(me["scopes"], json::parse(R"(["gpu-read"])"));
    EXPECT_TRUE(me["exp"].is_number_integer());
    // The group gate comes first: a disabled group is 404 whatever the token.
    EXPECT_EQ(Call(*none, "POST", "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=1&block=true").status, 404);
  }
}

// The agent's own API carries what its zeusd API reads: the power fields, named for what they
// are, the server's power from the instant field on request, and the CPU packages' energy.
TEST_F(ZeusdApiTest, TheAgentsOwnReadingsCarryThePowerFieldsAndCpuEnergy) {
  StartAgent();
  auto c = Client(agent_.socket_path());
  json readings = Json(Call(*c, "GET", "/v1/readings"));
  ASSERT_TRUE(readings["gpus"][0]["power_instant_w"].is_number()) << readings;
  EXPECT_TRUE(readings["gpus"][0]["power_average_w"].is_number());
  EXPECT_EQ(readings["cpus"][0]["index"], 0);
  EXPECT_EQ(readings["cpus"][0]["package_energy_uj"], 990'000);
  EXPECT_EQ(readings["cpus"][0]["dram_energy_uj"], 700);
  EXPECT_TRUE(readings["cpus"][1]["dram_energy_uj"].is_null());
  json usage = Json(Call(*c, "GET", "/v1/readings/server"));
  EXPECT_EQ(usage["gpu_power"], "power_usage");
  json instant = Json(Call(*c, "GET", "/v1/readings/server?gpu_power=instant"));
  EXPECT_EQ(instant["gpu_power"], "instant");
  EXPECT_GT(instant["server"]["gpu_power_w"].get<double>(), 0);
  EXPECT_EQ(Call(*c, "GET", "/v1/readings/server?gpu_power=fast").status, 400);
  const std::string metrics = Call(*c, "GET", "/metrics").body;
  EXPECT_NE(metrics.find("DCGM_FI_DEV_POWER_USAGE_INSTANT{"), std::string::npos);
  EXPECT_NE(metrics.find("node_rapl_package_joules_total{index=\"0\",path=\"" + package0_ + "\"} 0.99"),
            std::string::npos)
      << metrics;
}

TEST_F(ZeusdApiTest, StreamsPowerAsServerSentEvents) {
  StartAgent();
  for (bool tcp : {false, true}) {
    SCOPED_TRACE(tcp ? "tcp" : "unix socket");
    auto client = tcp ? Client("", TcpUrl()) : Client(agent_.socket_path());
    std::vector<std::string> lines;
    auto gpu = client->StreamLines("/gpu/stream_power?gpu_ids=1", [&](std::string_view line) {
      lines.emplace_back(line);
      return lines.size() < 2;  // an event's data line and the blank line ending it
    });
    ASSERT_TRUE(gpu.ok()) << gpu.error().message;
    ASSERT_EQ(lines.size(), 2u);
    ASSERT_EQ(lines[0].rfind("data: ", 0), 0u) << lines[0];
    EXPECT_EQ(lines[1], "");
    json event = json::parse(lines[0].substr(6));
    EXPECT_EQ(event["gpu_id"], 1);
    EXPECT_GT(event["power_mw"].get<int64_t>(), 10'000);
    EXPECT_TRUE(event["timestamp_ms"].is_number_integer());

    // CPU: power from the counters' rise over zeusd's 100 ms period; a package without DRAM says null.
    std::atomic<bool> done{false};
    std::thread mover([&] {
      for (int64_t uj = 100'000; !done; uj += 5'000) {
        cpu::testing::RaplTestTree::SetEnergy(package1_, uj % 1'000'000);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
    std::vector<json> events;
    auto cpu = client->StreamLines("/cpu/stream_power?cpu_ids=1", [&](std::string_view line) {
      if (line.rfind("data: ", 0) == 0) events.push_back(json::parse(line.substr(6)));
      return events.size() < 2;
    });
    done = true;
    mover.join();
    ASSERT_TRUE(cpu.ok()) << cpu.error().message;
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0]["cpu_id"], 1);
    EXPECT_TRUE(events[0]["dram_mw"].is_null());
    EXPECT_GT(events[1]["cpu_mw"].get<int64_t>(), 0) << events[1];  // about 1 J/s: 5 mJ every 5 ms

    auto unknown = Call(*client, "GET", "/gpu/stream_power?gpu_ids=0,7,5");
    EXPECT_EQ(unknown.status, 400);
    EXPECT_EQ(Json(unknown)["error"], "Unknown GPU indices: [5, 7]. Available: [0, 1]");
  }
}

// A power stream whose client reset its connection gives its slot back at once. Once, 16
// /gpu/stream_power streams closed by reset kept their slots until the next keep-alive comment
// (10 s: the readings of an idle GPU do not change, so nothing else is written), and every new
// stream got 503 meanwhile.
TEST_F(ZeusdApiTest, AStreamWhoseClientIsGoneGivesItsSlotBackAtOnce) {
  StartAgent();
  const int port = agent_.service()->tcp_port();
  // A stream of GPU 0 on a loopback connection, its answer's head read (at most 50 waits of 100 ms).
  auto open = [port](std::string& head) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(static_cast<uint16_t>(port));
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0) return fd;
    const std::string request = "GET /gpu/stream_power?gpu_ids=0 HTTP/1.1\r\nHost: a\r\n\r\n";
    ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    char buffer[4096];
    for (int waits = 0; waits < 50 && head.find("\r\n\r\n") == std::string::npos; ++waits) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
      if (got <= 0) break;
      head.append(buffer, static_cast<size_t>(got));
    }
    return fd;
  };
  std::vector<int> streams;
  const size_t full = agent::kMaxReadingStreams;
  for (size_t i = 0; i < full; ++i) {
    std::string head;
    streams.push_back(open(head));
    ASSERT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << i << ": " << head;
  }
  std::string refused;
  ::close(open(refused));
  ASSERT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << full << " streams fill the listener: " << refused;
  for (int fd : streams) {
    const linger reset{1, 0};  // close with RST
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    ::close(fd);
  }
  streams.clear();
  // Every slot is free at once, well before a keep-alive comment (10 s): every stream opens again
  // within 5 s (a bound, not a measurement).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (streams.size() < full && std::chrono::steady_clock::now() < until) {
    std::string head;
    const int fd = open(head);
    if (head.rfind("HTTP/1.1 200", 0) == 0) {
      streams.push_back(fd);
    } else {
      ::close(fd);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  EXPECT_EQ(streams.size(), full) << "streams opened again before a keep-alive comment";
  for (int fd : streams) ::close(fd);
}

TEST_F(ZeusdApiTest, SettersActUnderAnImplicitLeaseOfTheCaller) {
  StartAgent("", {agent::ZeusdGroup::kGpuControl, agent::ZeusdGroup::kGpuRead});
  auto c = Client(agent_.socket_path());
  const std::vector<int>& clocks = agent_.service()->node().gpus()[0].sm_clocks_mhz;  // highest first
  const int high = clocks[0], low = clocks[clocks.size() / 2];
  const std::string lock = "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=" + std::to_string(low) +
                           "&max_clock_mhz=" + std::to_string(high) + "&block=true";
  auto set = Call(*c, "POST", lock);
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_TRUE(set.body.empty());
  agent::GpuControl control = agent_.Control(0);
  ASSERT_TRUE(control.lease.has_value());
  EXPECT_EQ(control.lease->holder.pid, ::getpid());  // this process holds it now, by an implicit lease
  // /v1/state shows it as implicit, with no time to live (issue 54: it showed "ttl_s": 1e12).
  auto state = Call(*c, "GET", "/v1/state");
  ASSERT_EQ(state.status, 200) << state.body;
  const nlohmann::json lease = nlohmann::json::parse(state.body)["gpus"][0]["lease"];
  EXPECT_TRUE(lease.value("implicit", false)) << lease.dump();
  EXPECT_TRUE(lease["ttl_s"].is_null()) << lease.dump();
  ASSERT_TRUE(control.sm_lock.has_value());
  EXPECT_EQ(control.sm_lock->min_mhz, low);
  EXPECT_EQ(control.sm_lock->max_mhz, high);
  EXPECT_EQ(Call(*c, "POST", "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&block=true").status, 200);
  EXPECT_EQ(agent_.Control(0).power_limit_mw, 300'000);
  EXPECT_EQ(Call(*c, "POST", "/gpu/set_persistence_mode?gpu_ids=0&enabled=true&block=true").status, 200);
  EXPECT_EQ(Call(*c, "POST", "/gpu/set_persistence_mode?gpu_ids=0&enabled=false&block=true").status, 400);

  // Refusals: a clock the GPU lacks (per device, as zeusd aggregates), a GPU that does not exist
  // (text, as zeusd's writes), a missing parameter.
  auto unsupported =
      Call(*c, "POST", "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=1&max_clock_mhz=2&block=true");
  EXPECT_EQ(unsupported.status, 400);
  EXPECT_NE(Json(unsupported)["errors"]["0"].get<std::string>().find("does not support an SM clock of 1 MHz"),
            std::string::npos);
  auto huge = Call(*c, "POST",
                   "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=4294967295&max_clock_mhz=4294967295&block=true");
  EXPECT_EQ(huge.status, 400) << huge.body;  // a u32 past any int: an unsupported clock, not a wrapped one
  EXPECT_NE(huge.body.find("does not support an SM clock of 2147483647 MHz"), std::string::npos) << huge.body;
  auto absent = Call(*c, "POST", "/gpu/reset_gpu_locked_clocks?gpu_ids=9&block=true");
  EXPECT_EQ(absent.status, 400);
  EXPECT_EQ(absent.body, "GPU index 9 does not exist.");
  EXPECT_EQ(absent.content_type, "text/plain; charset=utf-8");
  auto no_block = Call(*c, "POST", "/gpu/reset_gpu_locked_clocks?gpu_ids=0");
  EXPECT_EQ(no_block.status, 400);
  EXPECT_NE(no_block.body.find("missing field `block`"), std::string::npos);
  auto not_number = Call(*c, "POST", "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=-5&block=true");
  EXPECT_EQ(not_number.status, 400);
  EXPECT_NE(not_number.body.find("invalid digit"), std::string::npos);
  // block=false: answered 200 whatever happens, as zeusd does.
  EXPECT_EQ(Call(*c, "POST", "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=1&max_clock_mhz=2&block=false").status,
            200);
  EXPECT_EQ(agent_.Control(0).sm_lock->max_mhz, high);  // the refused lock changed nothing

  EXPECT_EQ(Call(*c, "POST", "/gpu/reset_locked_clocks?gpu_ids=0&block=true").status, 200);
  EXPECT_FALSE(agent_.Control(0).sm_lock.has_value());
  EXPECT_EQ(Call(*c, "GET", "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=1&block=true").status, 404);  // POST only
}

TEST_F(ZeusdApiTest, OverTcpASetterNeedsATokenAndLastsWhileItsClientKeepsAConnection) {
  const std::string key_file = WriteKey("k");
  StartAgent(key_file, {agent::ZeusdGroup::kGpuControl, agent::ZeusdGroup::kGpuRead}, /*grace_s=*/0.5);
  auto key = agent::ZeusdSigningKey::FromBytes("k");
  const std::string control = agent::IssueZeusdToken({"bob", {agent::ZeusdGroup::kGpuControl}, std::nullopt}, *key);
  const std::string reader = agent::IssueZeusdToken({"eve", {agent::ZeusdGroup::kGpuRead}, std::nullopt}, *key);
  const std::string path = "/gpu/set_power_limit?gpu_ids=1&power_limit_mw=350000&block=true";
  EXPECT_EQ(Json(Call(*Client("", TcpUrl(), reader), "POST", path))["error"],
            "Token for user 'eve' lacks required scope 'gpu-control'. Token scopes: ['gpu-read']");
  {
    auto bob = Client("", TcpUrl(), control);
    ASSERT_EQ(Call(*bob, "POST", path).status, 200);
    EXPECT_EQ(agent_.Control(1).power_limit_mw, 350'000);
    ASSERT_TRUE(agent_.Control(1).lease.has_value());
    EXPECT_EQ(agent_.Control(1).lease->holder.Description(), "zeusd client 'bob' at 127.0.0.1");
    // Another caller cannot act on the GPU bob holds.
    auto other = Call(*Client(agent_.socket_path(), "", control), "POST", path);
    EXPECT_EQ(other.status, 409);
    EXPECT_NE(Json(other)["errors"]["1"].get<std::string>().find("is leased by zeusd client 'bob'"), std::string::npos);
  }
  // bob's connection closed; a new one within the grace (an HTTP client recycling its connection),
  // even one that only reads, carries the lease on: what bob set stays.
  auto bob_reading = Client("", TcpUrl(), control);
  ASSERT_EQ(Call(*bob_reading, "GET", "/auth/whoami").status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));  // past the grace, that connection open
  EXPECT_EQ(agent_.Control(1).power_limit_mw, 350'000) << "a read on a new connection keeps the lease too";
  bob_reading.reset();
  auto bob_again = Client("", TcpUrl(), control);
  ASSERT_EQ(
      Call(*bob_again, "POST", "/gpu/set_gpu_locked_clocks?gpu_ids=1&min_clock_mhz=1410&max_clock_mhz=1410&block=true")
          .status,
      200);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));  // past the grace, the connection open
  EXPECT_EQ(agent_.Control(1).power_limit_mw, 350'000);
  EXPECT_TRUE(agent_.Control(1).sm_lock.has_value());
  bob_again.reset();  // bob goes away: after the grace, everything he set is undone
  EXPECT_TRUE(Eventually([&] { return !agent_.Control(1).lease.has_value(); }, 10));
  EXPECT_FALSE(agent_.Control(1).power_limit_mw.has_value());
  EXPECT_FALSE(agent_.Control(1).sm_lock.has_value());
}

// Every zeusd endpoint, over the socket and over TCP, with a JWT of every scope: statuses, shapes
// and units as zeusd's documentation gives them.
TEST_F(ZeusdApiTest, EveryEndpointAnswersOverBothTransportsWithAToken) {
  const std::string key_file = WriteKey("every endpoint\n");
  const std::string token = agent::IssueZeusdToken(
      {"ops", {agent::ZeusdGroup::kGpuControl, agent::ZeusdGroup::kGpuRead, agent::ZeusdGroup::kCpuRead}, NowS() + 600},
      *agent::ZeusdSigningKey::FromBytes("every endpoint\n"));
  for (bool tcp : {false, true}) {
    SCOPED_TRACE(tcp ? "tcp" : "unix socket");
    // A fresh agent a transport: the socket's pass leaves this process's implicit lease behind (it
    // lives while the process does), which the TCP client (another holder) could not act under.
    StartAgent(key_file, {agent::ZeusdGroup::kGpuControl, agent::ZeusdGroup::kGpuRead, agent::ZeusdGroup::kCpuRead},
               /*grace_s=*/0.2);
    const std::vector<int>& sm = agent_.service()->node().gpus()[0].sm_clocks_mhz;
    const std::vector<int>& memory = agent_.service()->node().gpus()[0].memory_clocks_mhz;
    const std::string sm_mhz = std::to_string(sm[sm.size() / 2]), memory_mhz = std::to_string(memory.front());
    auto c = tcp ? Client("", TcpUrl(), token) : Client(agent_.socket_path(), "", token);
    auto ok = [&](const std::string& method, const std::string& path) {
      http::HttpResponse r = Call(*c, method, path);
      EXPECT_EQ(r.status, 200) << method << " " << path << ": " << r.body;
      return r;
    };
    EXPECT_EQ(Json(ok("GET", "/discover"))["auth_required"], true);
    EXPECT_TRUE(Json(ok("GET", "/time"))["timestamp_ms"].is_number_unsigned());
    EXPECT_EQ(Json(ok("GET", "/auth/whoami"))["sub"], "ops");
    EXPECT_TRUE(Json(ok("GET", "/gpu/get_cumulative_energy"))["1"]["energy_mj"].is_number_integer());
    EXPECT_TRUE(Json(ok("GET", "/gpu/get_power?gpu_ids=0"))["power_mw"]["0"].is_number_integer());
    const int64_t limit_mw = Json(ok("GET", "/gpu/get_power_limit"))["0"]["power_limit_mw"];
    json range = Json(ok("GET", "/gpu/get_power_limit_constraints"))["0"];
    EXPECT_LE(range["min_power_limit_mw"].get<int64_t>(), limit_mw);
    EXPECT_LE(limit_mw, range["max_power_limit_mw"].get<int64_t>());
    EXPECT_EQ(Json(ok("GET", "/gpu/get_persistence_mode"))["0"]["enabled"], true);
    const std::string middle =
        std::to_string((range["min_power_limit_mw"].get<int64_t>() + range["max_power_limit_mw"].get<int64_t>()) / 2);
    for (const char* block : {"true", "false"}) {
      const std::string b = std::string("&block=") + block;
      EXPECT_TRUE(ok("POST", "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=" + middle + b).body.empty());
      ok("POST", "/gpu/set_persistence_mode?gpu_ids=0,1&enabled=true" + b);
      ok("POST", "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=" + sm_mhz + "&max_clock_mhz=" + sm_mhz + b);
      ok("POST",
         "/gpu/set_mem_locked_clocks?gpu_ids=0&min_clock_mhz=" + memory_mhz + "&max_clock_mhz=" + memory_mhz + b);
      EXPECT_EQ(Json(ok("GET", "/gpu/get_power_limit?gpu_ids=0"))["0"]["power_limit_mw"], std::stoll(middle));
      ok("POST", "/gpu/reset_gpu_locked_clocks?gpu_ids=0" + b);
      ok("POST", "/gpu/reset_mem_locked_clocks?gpu_ids=0" + b);
      ok("POST", "/gpu/reset_locked_clocks?gpu_ids=0" + b);
    }
    EXPECT_FALSE(agent_.Control(0).sm_lock.has_value());
    EXPECT_EQ(Json(ok("GET", "/cpu/get_cumulative_energy?cpu=true&dram=true"))["0"]["dram_energy_uj"], 700);
    EXPECT_TRUE(Json(ok("GET", "/cpu/get_power?cpu_ids=0"))["power_mw"]["0"]["cpu_mw"].is_number_integer());
    for (const char* stream : {"/gpu/stream_power", "/cpu/stream_power"}) {
      auto own = tcp ? Client("", TcpUrl(), token) : Client(agent_.socket_path(), "", token);
      std::string first;
      auto streamed = own->StreamLines(stream, [&](std::string_view line) {
        first = std::string(line);
        return false;
      });
      ASSERT_TRUE(streamed.ok()) << stream << ": " << streamed.error().message;
      EXPECT_EQ(first.rfind("data: {", 0), 0u) << stream << ": " << first;
    }
    // The refusals the must point names: a GPU out of range, a missing scope, expired and forged tokens.
    EXPECT_EQ(Call(*c, "POST", "/gpu/reset_locked_clocks?gpu_ids=2&block=false").body, "GPU index 2 does not exist.");
    EXPECT_EQ(Json(Call(*c, "GET", "/gpu/get_power?gpu_ids=2"))["error"], "GPU 2 not found");
  }
}

TEST_F(ZeusdApiTest, WithoutAKeyTcpSettersAreRefused) {
  StartAgent("", {agent::ZeusdGroup::kGpuControl, agent::ZeusdGroup::kGpuRead});
  auto refused = Call(*Client("", TcpUrl()), "POST", "/gpu/reset_locked_clocks?gpu_ids=0&block=true");
  EXPECT_EQ(refused.status, 403);
  EXPECT_NE(Json(refused)["error"].get<std::string>().find("--zeusd-signing-key"), std::string::npos);
  EXPECT_EQ(Call(*Client("", TcpUrl()), "GET", "/gpu/get_power").status, 200);  // reads: loopback
}

}  // namespace
}  // namespace wattcut
