// AgentBackend against the real agent (an AgentService in this process) on simulated GPUs and the
// fake NVML: what it discovers is what the agent's backend has, a lock is made under this
// process's lease and undone when the backend goes, refusals keep the agent's code and message
// (NVML's error name included), a restarted agent's forgotten lease is taken again with what was
// set, and over TCP the token's scope decides.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "tests/agent/agent_test_service.h"
#include "wattcut/gpu/agent_backend.h"
#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"
#include "wattcut/gpu/nvml_backend.h"

namespace wattcut {
namespace {

using agent::ClockRange;
using testing::AgentTestService;

std::unique_ptr<AgentBackend> Open(const std::string& socket_path, int ttl_s = 10) {
  AgentBackendOptions options;
  options.endpoint.unix_socket = socket_path;
  options.lease_ttl_s = ttl_s;
  options.log = [](const std::string&) {};
  auto backend = AgentBackend::Open(std::move(options));
  EXPECT_TRUE(backend.ok()) << backend.error().message;
  return backend.ok() ? std::move(*backend) : nullptr;
}

template <typename Done>
bool Eventually(Done done) {
  for (int i = 0; i < 1000; ++i) {  // at most 10 s
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

bool Applied(const agent::GpuControl& control, int min_mhz, int max_mhz) {
  return control.sm_applied && control.sm_applied->min_mhz == min_mhz && control.sm_applied->max_mhz == max_mhz;
}

TEST(AgentBackendOnAnAgent, DiscoversWhatTheAgentsGpusHave) {
  AgentTestService agent;
  auto backend = Open(agent.socket_path());
  ASSERT_NE(backend, nullptr);
  auto local = std::move(SimulatedBackend::Create("a100-sxm", 2)).value();
  EXPECT_EQ(backend->name(), "agent(unix:" + agent.socket_path() + ")");
  EXPECT_EQ(backend->agent_backend_name(), "simulated");
  ASSERT_EQ(*backend->DeviceCount(), 2);
  for (int gpu = 0; gpu < 2; ++gpu) {
    EXPECT_EQ(backend->Info(gpu)->name, local->Info(gpu)->name);
    EXPECT_EQ(backend->Info(gpu)->uuid, local->Info(gpu)->uuid);
    EXPECT_EQ(*backend->SupportedMemoryClocksMhz(gpu), *local->SupportedMemoryClocksMhz(gpu));
    EXPECT_EQ(*SupportedSmClocksMhz(*backend, gpu), *SupportedSmClocksMhz(*local, gpu));
    EXPECT_EQ(backend->PowerLimits(gpu)->default_mw, local->PowerLimits(gpu)->default_mw);
    EXPECT_EQ(backend->PowerLimits(gpu)->min_mw, local->PowerLimits(gpu)->min_mw);
    EXPECT_EQ(*backend->SmClockMhz(gpu), 1410);
    EXPECT_EQ(*backend->PowerLimitMw(gpu), local->PowerLimits(gpu)->default_mw);
    EXPECT_GT(*backend->PowerUsageMw(gpu), 0);
    EXPECT_TRUE(backend->TotalEnergyMj(gpu).ok());
  }
  EXPECT_FALSE(agent.Control(0).lease.has_value());  // reading takes no lease
}

TEST(AgentBackendOnAnAgent, ALockIsMadeUnderThisProcesssLeaseAndUndoneWhenTheBackendGoes) {
  AgentTestService agent;
  {
    auto backend = Open(agent.socket_path());
    ASSERT_NE(backend, nullptr);
    ASSERT_TRUE(backend->LockGpuClocks(1, 1200, 1200).ok());
    ASSERT_TRUE(LockMemoryClockToMax(*backend, 1).ok());
    ASSERT_TRUE(backend->SetPowerLimitMw(1, 300000).ok());
    const agent::GpuControl control = agent.Control(1);
    ASSERT_TRUE(control.lease.has_value());
    EXPECT_EQ(control.lease->holder.pid, getpid());
    EXPECT_TRUE(Applied(control, 1200, 1200));
    EXPECT_EQ(*backend->SmClockMhz(1), 1200);
    EXPECT_EQ(*backend->PowerLimitMw(1), 300000);
    EXPECT_TRUE(agent.simulated()->memory_clocks_locked(1));
    EXPECT_FALSE(agent.Control(0).lease.has_value());  // only the GPU it set
    ASSERT_TRUE(backend->ResetGpuClocks(1).ok());
    EXPECT_FALSE(agent.simulated()->gpu_clocks_locked(1));
    ASSERT_TRUE(backend->LockGpuClocks(1, 1110, 1200).ok());
    EXPECT_TRUE(Applied(agent.Control(1), 1110, 1200));
  }
  // Released: the agent undid all of it.
  const agent::GpuControl control = agent.Control(1);
  EXPECT_FALSE(control.lease.has_value());
  EXPECT_FALSE(control.sm_applied.has_value());
  EXPECT_FALSE(agent.simulated()->gpu_clocks_locked(1));
  EXPECT_FALSE(agent.simulated()->memory_clocks_locked(1));
  EXPECT_EQ(*agent.simulated()->PowerLimitMw(1), agent.simulated()->PowerLimits(1)->default_mw);
}

TEST(AgentBackendOnAnAgent, BadInputIsRefusedWithTheAgentsCodeAndMessage) {
  AgentTestService agent;
  auto backend = Open(agent.socket_path());
  ASSERT_NE(backend, nullptr);
  Status unsupported = backend->LockGpuClocks(0, 1234, 1234);
  ASSERT_FALSE(unsupported.ok());
  EXPECT_EQ(unsupported.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(unsupported.error().message.find("1234"), std::string::npos) << unsupported.error().message;
  Status too_low = backend->SetPowerLimitMw(0, 10000);
  ASSERT_FALSE(too_low.ok());
  EXPECT_EQ(too_low.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(agent.Control(0).sm_applied.has_value());  // nothing was set
  EXPECT_EQ(backend->LockGpuClocks(2, 1200, 1200).error().message, "GPU 2 does not exist (2 GPUs)");
}

TEST(AgentBackendOnAnAgent, ARestartedAgentsForgottenLeaseIsTakenAgainWithWhatWasSet) {
  AgentTestService agent;
  auto backend = Open(agent.socket_path(), /*ttl_s=*/3);  // renewed every second
  ASSERT_NE(backend, nullptr);
  ASSERT_TRUE(LockMemoryClockToMax(*backend, 0).ok());
  ASSERT_TRUE(backend->LockGpuClocks(0, 1200, 1200).ok());
  agent.Start();  // a new agent on the same socket: the old one reset the GPU, the new one knows no lease
  EXPECT_FALSE(agent.Control(0).lease.has_value());
  ASSERT_TRUE(Eventually([&] { return backend->leases_retaken() == 1; }));
  const agent::GpuControl control = agent.Control(0);
  ASSERT_TRUE(control.lease.has_value());
  EXPECT_EQ(control.lease->holder.pid, getpid());
  EXPECT_TRUE(Applied(control, 1200, 1200));
  EXPECT_TRUE(agent.simulated()->memory_clocks_locked(0));

  // A setter that finds its lease forgotten (no renewal came between) takes it again itself.
  agent.Start();
  ASSERT_TRUE(backend->LockGpuClocks(0, 1110, 1110).ok());
  EXPECT_EQ(backend->leases_retaken(), 2u);
  EXPECT_TRUE(Applied(agent.Control(0), 1110, 1110));
  EXPECT_TRUE(agent.simulated()->memory_clocks_locked(0));
}

TEST(AgentBackendOnAnAgent, NvmlErrorsComeBackWithNvmlsName) {
  fake_nvml::ScopedFakeNvml nvml(fake_nvml::State{{"gpu1.fail.nvmlDeviceSetGpuLockedClocks", "4"}});
  auto opened = OpenNvmlBackend(std::string(WATTCUT_FAKE_NVML_DIR) + "/libnvidia-ml.so.1");
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  AgentTestService agent;
  agent.Start(std::move(*opened));
  auto backend = Open(agent.socket_path());
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->agent_backend_name(), "nvml");
  ASSERT_TRUE(backend->LockGpuClocks(0, 1200, 1200).ok());
  Status refused = backend->LockGpuClocks(1, 1200, 1200);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kDeviceError);
  EXPECT_NE(refused.error().message.find("NVML_ERROR_NO_PERMISSION"), std::string::npos) << refused.error().message;
  EXPECT_NE(refused.error().message.find("GPU 1"), std::string::npos) << refused.error().message;
  EXPECT_EQ(nvml.Read().at("gpu0.locked_max"), "1200");
}

TEST(AgentBackendOnAnAgent, OverTcpTheTokensScopeDecides) {
  AgentTestService agent;
  const std::string tokens = agent.folder() + "/agent.tokens";
  std::ofstream(tokens) << "train t-3f9c0a5be17d44c2\nread r-77aa01c9d0e3b5f8\n";
  ASSERT_EQ(::chmod(tokens.c_str(), 0600), 0);
  agent::AgentServiceOptions options;
  options.tcp_host = "127.0.0.1";
  options.tcp_port = 0;
  options.token_file = tokens;
  agent.Start(nullptr, options);
  ASSERT_NE(agent.service(), nullptr);
  const std::string url = "http://127.0.0.1:" + std::to_string(agent.service()->tcp_port());
  const std::string train_file = agent.folder() + "/train.token", read_file = agent.folder() + "/read.token";
  std::ofstream(train_file) << "train t-3f9c0a5be17d44c2\n";
  std::ofstream(read_file) << "r-77aa01c9d0e3b5f8\n";

  auto open = [&](const std::string& token_file) {
    AgentBackendOptions backend_options;
    backend_options.endpoint = std::move(AgentEndpoint(url, token_file)).value();
    backend_options.log = [](const std::string&) {};
    return AgentBackend::Open(std::move(backend_options));
  };
  auto trainer = open(train_file);
  ASSERT_TRUE(trainer.ok()) << trainer.error().message;
  EXPECT_EQ((*trainer)->name(), "agent(" + url + ")");
  ASSERT_TRUE((*trainer)->LockGpuClocks(0, 1200, 1200).ok());
  EXPECT_TRUE(Applied(agent.Control(0), 1200, 1200));

  auto reader = open(read_file);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ(*(*reader)->SmClockMhz(0), 1200);
  Status refused = (*reader)->LockGpuClocks(1, 1200, 1200);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(refused.error().message.find("'train' scope"), std::string::npos) << refused.error().message;

  auto anonymous = open("");
  ASSERT_FALSE(anonymous.ok());
  EXPECT_EQ(anonymous.error().code, ErrorCode::kPermissionDenied);  // 401
  EXPECT_NE(anonymous.error().message.find("Authorization"), std::string::npos) << anonymous.error().message;
}

}  // namespace
}  // namespace wattcut
