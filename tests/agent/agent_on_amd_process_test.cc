// `wattcut agent --backend rocm-smi` as a process on a fake AMD node (the fake librocm_smi64.so.1,
// fake_amdgpu/fake_rocm_smi.cc): the bars the NVIDIA path has, on AMD. An unprivileged rank's lock
// lands through the agent and is undone when the rank dies; a row's ceiling caps a lock; the
// readings' energy is the energy counter's; /metrics speaks AMD's exporter's names.
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "tests/agent/agent_process.h"
#include "wattcut/base/child_process_testing.h"

namespace wattcut::testing {
namespace {

using fake_nvml::ScopedFakeNvml;
using nlohmann::json;

class AgentOnAmdTest : public ::testing::Test {
 protected:
  AgentOnAmdTest() : fake_(fake_nvml::State{{"gpu_count", "2"}}, fake_nvml::kRocmSmiStateVariable) {
    dir_ = std::filesystem::path(fake_.path()).parent_path() / "agent";
    std::filesystem::create_directories(dir_);
    // An unprivileged rank reaches the socket through its folder.
    std::filesystem::permissions(std::filesystem::path(fake_.path()).parent_path(),
                                 std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                     std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                     std::filesystem::perms::others_exec);
  }
  std::unique_ptr<AgentProcess> StartAgent(std::vector<std::string> args = {}) {
    args.insert(args.begin(), {"--backend", "rocm-smi", "--rocm-smi-library", WATTCUT_FAKE_ROCM_SMI_LIBRARY,
                               "--socket-mode", "0666"});
    auto agent = std::make_unique<AgentProcess>(dir_, std::move(args));
    EXPECT_TRUE(agent->running()) << agent->startup_output();
    return agent;
  }
  std::string Perf(int gpu) { return fake_.Read()["gpu" + std::to_string(gpu) + ".perf"]; }

  ScopedFakeNvml fake_;
  std::string dir_;
};

TEST_F(AgentOnAmdTest, AnUnprivilegedRanksLockLandsAndIsUndoneWhenItDies) {
  auto agent = StartAgent();
  // The rank: a curl process that leases GPU 0, locks it to 1200 MHz and stays, as nobody when the
  // test runs as root (CI does).
  const bool as_nobody = geteuid() == 0;
  ChildProcess rank =
      StartChild(CurlHolder(agent->socket(), {R"(POST /v1/leases {"gpus":[0],"ttl_s":3600})",
                                              R"(PUT /v1/gpus/0/sm-clocks {"min_mhz":1200,"max_mhz":1200})"}),
                 "time_s", {}, [as_nobody] {
                   if (as_nobody && (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
                     _exit(126);
                   }
                 });
  ASSERT_GT(rank.pid, 0) << rank.output;
  EXPECT_EQ(LockedClocks(fake_, 0), "1200-1200") << rank.output;
  EXPECT_EQ(Perf(0), "manual");
  auto client = agent->UnixClient();
  json state = Call(*client, "GET", "/v1/state").body;
  if (as_nobody) {
    EXPECT_EQ(state["gpus"][0]["lease"]["holder"]["uid"], 65534) << state.dump();
  }
  EXPECT_EQ(Call(*client, "GET", "/v1/readings").body["gpus"][0]["sm_clock_mhz"], 1200);
  StopChild(rank.pid, SIGKILL);
  ASSERT_TRUE(WaitUntil([&] { return LockedClocks(fake_, 0) == "0-0"; })) << LockedClocks(fake_, 0);
  EXPECT_EQ(Perf(0), "auto");
  EXPECT_TRUE(Call(*client, "GET", "/v1/state").body["gpus"][0]["lease"].is_null());
  // Every ROCm SMI call, the rank's lock included, came from the agent's process.
  EXPECT_GT(ExpectEveryCallFrom(fake_.Log(), agent->pid()), 0);
}

TEST_F(AgentOnAmdTest, ARowsCeilingCapsATrainingLockAndLiftsBackToIt) {
  auto agent = StartAgent();
  auto client = agent->UnixClient();  // as root: the train and row scopes
  ASSERT_EQ(Call(*client, "POST", "/v1/leases", {{"gpus", {0}}}).status, 201);
  ASSERT_EQ(Call(*client, "PUT", "/v1/gpus/0/sm-clocks", {{"min_mhz", 2100}, {"max_mhz", 2100}}).status, 200);
  AgentReply capped = Call(*client, "PUT", "/v1/gpus/0/ceiling", {{"mhz", 1275}, {"lease_s", 60}});
  ASSERT_EQ(capped.status, 200) << capped.text;
  EXPECT_EQ(LockedClocks(fake_, 0), "1275-1275");
  EXPECT_EQ(Call(*client, "GET", "/v1/readings").body["gpus"][0]["sm_clock_mhz"], 1275);
  ASSERT_EQ(Call(*client, "PUT", "/v1/gpus/1/ceiling", {{"mhz", 1005}, {"lease_s", 60}}).status, 200);
  EXPECT_EQ(LockedClocks(fake_, 1), "500-1005");  // a ceiling alone: the GPU's lowest clock to it
  ASSERT_EQ(Call(*client, "DELETE", "/v1/gpus/0/ceiling").status, 200);
  EXPECT_EQ(LockedClocks(fake_, 0), "2100-2100");
  AgentReply outside = Call(*client, "PUT", "/v1/gpus/0/sm-clocks", {{"min_mhz", 2200}, {"max_mhz", 2200}});
  EXPECT_EQ(outside.status, 422) << outside.text;
  EXPECT_NE(outside.text.find("supported: 2100..500 MHz"), std::string::npos) << outside.text;
}

TEST_F(AgentOnAmdTest, EnergyIsTheCountersAndMetricsSpeakAmdsExporter) {
  auto agent = StartAgent();
  auto client = agent->UnixClient();
  EXPECT_EQ(Call(*client, "GET", "/v1/agent").body["backend"], "rocm-smi");
  json gpus = Call(*client, "GET", "/v1/gpus").body;
  EXPECT_EQ(gpus["gpus"][0]["name"], "AMD Instinct MI300X (fake)") << gpus.dump();
  const json first = Call(*client, "GET", "/v1/readings").body["gpus"][0];
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const json second = Call(*client, "GET", "/v1/readings").body["gpus"][0];
  ASSERT_TRUE(first["energy_mj"].is_number()) << first.dump();
  EXPECT_GT(second["energy_mj"].get<double>(), first["energy_mj"].get<double>());
  EXPECT_GT(second["power_w"].get<double>(), 0);
  AgentReply metrics = Call(*client, "GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.text.find("\ngpu_energy_consumed{gpu_id=\"0\",gpu_uuid=\"AMD-GPU-00001234abcd0000\","
                              "card_model=\"AMD Instinct MI300X (fake)\""),
            std::string::npos)
      << metrics.text;
  EXPECT_NE(metrics.text.find(",clock_type=\"GPU_CLOCK_TYPE_SYSTEM\"} 2100\n"), std::string::npos) << metrics.text;
  EXPECT_EQ(metrics.text.find("DCGM_FI_DEV"), std::string::npos);
}

// zeusd's API on an AMD node, as zeusd's own AMD backend answers: discovery, clocks and power; no
// persistence mode, refused rather than pretended.
TEST_F(AgentOnAmdTest, ZeusdsApiServesTheAmdGpusAndRefusesPersistenceMode) {
  auto agent = StartAgent();
  auto client = agent->UnixClient();
  AgentReply discover = Call(*client, "GET", "/discover");
  ASSERT_EQ(discover.status, 200) << discover.text;
  EXPECT_EQ(discover.body["gpus"][0]["pci_address"], "0000:01:00.0") << discover.text;
  AgentReply get = Call(*client, "GET", "/gpu/get_persistence_mode?gpu_ids=0");
  EXPECT_EQ(get.status, 400) << get.text;
  EXPECT_NE(get.text.find("persistence mode is not supported on AMD GPUs"), std::string::npos) << get.text;
  AgentReply set = Call(*client, "POST", "/gpu/set_persistence_mode?gpu_ids=0&enabled=true&block=true");
  EXPECT_EQ(set.status, 400) << set.text;
  EXPECT_NE(set.text.find("persistence mode is not supported on AMD GPUs"), std::string::npos) << set.text;
  AgentReply lock =
      Call(*client, "POST", "/gpu/set_gpu_locked_clocks?gpu_ids=1&min_clock_mhz=1500&max_clock_mhz=1500&block=true");
  EXPECT_EQ(lock.status, 200) << lock.text;
  EXPECT_EQ(LockedClocks(fake_, 1), "1500-1500");
  AgentReply power = Call(*client, "GET", "/gpu/get_power?gpu_ids=0");
  EXPECT_EQ(power.status, 200) << power.text;
  EXPECT_GT(power.body["power_mw"]["0"].get<int64_t>(), 0) << power.text;
}

}  // namespace
}  // namespace wattcut::testing
