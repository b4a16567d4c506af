// zeusd's setters through a real `wattcut agent` process on the fake NVML, from real client
// processes (issue 29, point 3): a client SIGKILLed after setting a clock and a power limit has both
// undone; a zeusd lock stays under a row ceiling; a process forked by the setter's process (Zeus's
// frequency controller) sets clocks under its parent's implicit lease.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "tests/agent/agent_process.h"
#include "wattcut/base/child_process_testing.h"

namespace wattcut::testing {
namespace {

using fake_nvml::ScopedFakeNvml;

std::string PowerLimitMw(const ScopedFakeNvml& fake, int gpu) {
  auto state = fake.Read();
  const std::string key = "gpu" + std::to_string(gpu) + ".power_limit_mw";
  return state.count(key) ? state[key] : "default";
}

class ZeusdProcessTest : public ::testing::Test {
 protected:
  ZeusdProcessTest() : fake_(fake_nvml::State{{"gpu_count", "2"}}) {
    dir_ = std::filesystem::path(fake_.path()).parent_path() / "agent";
    std::filesystem::create_directories(dir_);
  }
  // A power limit between the GPU's bounds, in mW.
  int64_t SomeLimitMw(AgentProcess& agent) {
    auto gpus = Call(*agent.UnixClient(), "GET", "/v1/gpus").body["gpus"];
    const double min_w = gpus[0]["power_limit_w"]["min"], max_w = gpus[0]["power_limit_w"]["max"];
    return static_cast<int64_t>((min_w + max_w) / 2) * 1000;
  }
  ScopedFakeNvml fake_;
  std::string dir_;
};

TEST_F(ZeusdProcessTest, ASigkilledZeusdClientsClockAndPowerLimitAreUndone) {
  AgentProcess agent(dir_);
  ASSERT_TRUE(agent.running()) << agent.startup_output();
  const std::string limit = std::to_string(SomeLimitMw(agent));
  ChildProcess client = StartChild(
      CurlHolder(agent.socket(),
                 {"POST /gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=1200&max_clock_mhz=1200&block=true",
                  "POST /gpu/set_power_limit?gpu_ids=0&power_limit_mw=" + limit + "&block=true"}),
      "time_s");
  ASSERT_GT(client.pid, 0) << client.output;
  EXPECT_EQ(LockedClocks(fake_, 0), "1200-1200") << client.output;
  EXPECT_EQ(PowerLimitMw(fake_, 0), limit);
  auto state = Call(*agent.UnixClient(), "GET", "/v1/state").body;
  EXPECT_EQ(state["gpus"][0]["lease"]["holder"]["pid"], client.pid) << state;  // the implicit lease
  StopChild(client.pid, SIGKILL);
  ASSERT_TRUE(WaitUntil([&] { return LockedClocks(fake_, 0) == "0-0"; })) << LockedClocks(fake_, 0);
  ASSERT_TRUE(WaitUntil([&] { return PowerLimitMw(fake_, 0) != limit; })) << PowerLimitMw(fake_, 0);
  EXPECT_TRUE(Call(*agent.UnixClient(), "GET", "/v1/state").body["gpus"][0]["lease"].is_null());
}

TEST_F(ZeusdProcessTest, AZeusdLockNeverRisesAboveARowCeiling) {
  const AgentTokenFile tokens = WriteTokenFile(dir_);
  AgentProcess agent(dir_, {"--token-file", tokens.path});
  ASSERT_TRUE(agent.running()) << agent.startup_output();
  auto row = agent.TcpClient(tokens.row);
  ASSERT_EQ(Call(*row, "PUT", "/v1/gpus/0/ceiling", {{"mhz", 1275}, {"lease_s", 60}}).status, 200);
  ChildProcess client = StartChild(
      CurlHolder(agent.socket(),
                 {"POST /gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=1410&max_clock_mhz=1410&block=true"}),
      "time_s");
  ASSERT_GT(client.pid, 0) << client.output;
  EXPECT_EQ(LockedClocks(fake_, 0), "1275-1275") << "the ceiling wins over the zeusd client's 1410 MHz";
  ASSERT_EQ(Call(*row, "DELETE", "/v1/gpus/0/ceiling").status, 200);
  EXPECT_EQ(LockedClocks(fake_, 0), "1410-1410") << "the client's own lock, once the ceiling is lifted";
  StopChild(client.pid, SIGKILL);
  ASSERT_TRUE(WaitUntil([&] { return LockedClocks(fake_, 0) == "0-0"; }));
}

TEST_F(ZeusdProcessTest, DiscoveryAndPersistenceComeFromNvml) {
  fake_.Set("gpu1.persistence_mode", "0");
  AgentProcess agent(dir_);
  ASSERT_TRUE(agent.running()) << agent.startup_output();
  auto client = agent.UnixClient();
  AgentReply discover = Call(*client, "GET", "/discover");
  ASSERT_EQ(discover.status, 200) << discover.text;
  EXPECT_EQ(discover.body["gpus"][0]["pci_address"], "0000:18:00.0");
  EXPECT_EQ(discover.body["gpus"][1]["pci_address"], "0000:19:00.0");
  AgentReply persistence = Call(*client, "GET", "/gpu/get_persistence_mode");
  EXPECT_EQ(persistence.text, R"({"0":{"enabled":true},"1":{"enabled":false}})");
}

// Zeus's frequency controller: the training process sets a power limit (an implicit lease of its
// own), then forks a process that locks clocks. The child acts under its parent's lease; the clocks
// stay when the child exits and go when the parent does.
TEST_F(ZeusdProcessTest, AForkedChildSetsClocksUnderItsParentsLease) {
  AgentProcess agent(dir_);
  ASSERT_TRUE(agent.running()) << agent.startup_output();
  const std::string limit = std::to_string(SomeLimitMw(agent));
  const std::string script = R"(
import os, socket, sys, time
SOCK = sys.argv[1]
def post(path):
    s = socket.socket(socket.AF_UNIX)
    s.connect(SOCK)
    s.sendall(("POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").encode())
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    return data.split(b" ")[1].decode() + " " + data.split(b"\r\n\r\n", 1)[-1].decode()
print("parent", post("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=" + sys.argv[2] + "&block=true"), flush=True)
child = os.fork()
if child == 0:
    print("child", post("/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=1200&max_clock_mhz=1200&block=true"), flush=True)
    os._exit(0)
os.waitpid(child, 0)
print("ready", flush=True)
time.sleep(120)
)";
  ChildProcess parent = StartChild({"/usr/bin/python3", "-c", script, agent.socket(), limit}, "ready");
  ASSERT_GT(parent.pid, 0) << parent.output;
  EXPECT_NE(parent.output.find("parent 200"), std::string::npos) << parent.output;
  EXPECT_NE(parent.output.find("child 200"), std::string::npos) << parent.output;
  EXPECT_EQ(LockedClocks(fake_, 0), "1200-1200") << "the child's lock outlives the child";
  EXPECT_EQ(PowerLimitMw(fake_, 0), limit);
  StopChild(parent.pid, SIGKILL);
  ASSERT_TRUE(WaitUntil([&] { return LockedClocks(fake_, 0) == "0-0" && PowerLimitMw(fake_, 0) != limit; }))
      << LockedClocks(fake_, 0) << " " << PowerLimitMw(fake_, 0);
}

}  // namespace
}  // namespace wattcut::testing
