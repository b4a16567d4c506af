// The training rank through the node agent (an AgentService in this process on simulated GPUs):
// it opens no NVML, leases its GPU at Start, its planned clocks reach the agent, Close resets them
// and the lease ends with the client; $WATTCUT_AGENT_SOCKET stands for the option in place of
// NVML (never in place of a backend the caller chose), and a GPU another process holds stops Start.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>

#include "tests/agent/agent_test_service.h"
#include "wattcut/base/child_process_testing.h"
#include "wattcut/gpu/agent_backend.h"
#include "wattcut/runtime/rank_client.h"

namespace wattcut {
namespace {

using testing::AgentTestService;

// The server's side, scripted: the rank is registered, and each poll answers `next` once.
struct ScriptedPlans {
  std::optional<DeploymentAnswer> next;
  RankServerCalls Calls() {
    RankServerCalls calls;
    calls.register_rank = [](const std::string&, const TrainingRankIds&, const std::vector<int>&) {
      return Status::Ok();
    };
    calls.fetch_deployment = [this](const std::string&, int, uint64_t, uint64_t version) -> Result<DeploymentAnswer> {
      DeploymentAnswer answer{.version = version, .poll_interval_s = 1};
      if (next) answer = *std::exchange(next, std::nullopt);
      return answer;
    };
    return calls;
  }
  void Deploy(uint64_t version, std::vector<ScheduleEntry> frequencies) {
    next = DeploymentAnswer{.version = version,
                            .poll_interval_s = 1,
                            .change = RankDeployment{.version = version,
                                                     .apply_from_step = 0,
                                                     .mode = DeploymentMode::kPlan,
                                                     .plan_index = 0,
                                                     .frequencies = std::move(frequencies)}};
  }
};

// A rank whose own backend would be NVML from a library that does not exist: if it opened NVML,
// Start would fail.
RankClientOptions RankOptions(ScriptedPlans& plans) {
  RankClientOptions options;
  options.server.url = "http://127.0.0.1:9";
  options.job_id = "job-1";
  options.ids = {.rank = 0, .dp_rank = 0, .pp_rank = 0, .tp_rank = 0};
  options.gpu = 1;
  options.backend.nvml_library = "libnvidia-ml-absent.so.1";
  options.profile = false;
  options.start_watcher_thread = false;
  options.watcher.log = [](const std::string&) {};
  options.calls = plans.Calls();
  return options;
}

bool Applied(const agent::GpuControl& control, int mhz) {
  return control.sm_applied && control.sm_applied->min_mhz == mhz && control.sm_applied->max_mhz == mhz;
}

// One step of the plan's instructions; the clocks requested.
std::vector<int> Step(RankClient& client, const std::vector<std::string>& names) {
  std::vector<int> clocks;
  EXPECT_TRUE(client.OnStepBegin().ok());
  for (const std::string& name : names) {
    auto freq = client.OnInstructionBegin(name);
    EXPECT_TRUE(freq.ok()) << freq.error().message;
    clocks.push_back(freq.ok() ? *freq : 0);
    EXPECT_TRUE(client.OnInstructionEnd(name).ok());
  }
  EXPECT_TRUE(client.OnStepEnd().ok());
  return clocks;
}

TEST(RankClientOnAnAgent, SetsItsPlannedClocksThroughTheAgentAndOpensNoNvml) {
  AgentTestService agent;
  ScriptedPlans plans;
  RankClientOptions options = RankOptions(plans);
  options.agent_socket = agent.socket_path();
  {
    auto started = RankClient::Start(options);
    ASSERT_TRUE(started.ok()) << started.error().message;
    RankClient& client = **started;
    EXPECT_TRUE(client.through_agent());
    EXPECT_EQ(client.backend_name(), "agent(unix:" + agent.socket_path() + ")");
    EXPECT_EQ(client.available_freqs_mhz().front(), 1410);
    // Leased at Start by this process, the memory clock at its maximum.
    agent::GpuControl control = agent.Control(1);
    ASSERT_TRUE(control.lease.has_value());
    EXPECT_EQ(control.lease->holder.pid, getpid());
    EXPECT_FALSE(agent.Control(0).lease.has_value());
    ASSERT_TRUE(agent.simulated()->memory_clocks_locked(1));

    // No plan yet: the highest clock.
    EXPECT_EQ(Step(client, {"forward", "backward"}), (std::vector<int>{1410, 1410}));
    ASSERT_TRUE(client.WaitUntilFrequencyApplied().ok());
    EXPECT_TRUE(Applied(agent.Control(1), 1410));
    // A plan: each instruction's clock reaches the agent.
    plans.Deploy(1, {{"forward", 1200}, {"backward", 1110}});
    client.watcher().RunOnce();
    ASSERT_TRUE(client.OnStepBegin().ok());
    ASSERT_EQ(*client.OnInstructionBegin("forward"), 1200);
    ASSERT_TRUE(client.WaitUntilFrequencyApplied().ok());
    EXPECT_TRUE(Applied(agent.Control(1), 1200));
    EXPECT_EQ(*client.SmClockMhz(), 1200);
    ASSERT_TRUE(client.OnInstructionEnd("forward").ok());
    ASSERT_EQ(*client.OnInstructionBegin("backward"), 1110);
    ASSERT_TRUE(client.WaitUntilFrequencyApplied().ok());
    EXPECT_TRUE(Applied(agent.Control(1), 1110));
    ASSERT_TRUE(client.OnInstructionEnd("backward").ok());
    ASSERT_TRUE(client.OnStepEnd().ok());
    EXPECT_EQ(client.setter_stats().failed, 0u) << client.setter_stats().last_error;

    // Close resets the clocks (the lease stays while the client lives).
    ASSERT_TRUE(client.Close().ok());
    EXPECT_FALSE(agent.Control(1).sm_applied.has_value());
    EXPECT_FALSE(agent.simulated()->gpu_clocks_locked(1));
    EXPECT_FALSE(agent.simulated()->memory_clocks_locked(1));
  }
  EXPECT_FALSE(agent.Control(1).lease.has_value());  // released with the client
}

// Sets an environment variable for one scope.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedVariable() { ::unsetenv(name_); }

 private:
  const char* name_;
};

TEST(RankClientOnAnAgent, TheEnvironmentVariableStandsForTheSocketInPlaceOfNvmlOnly) {
  AgentTestService agent;
  ScriptedPlans plans;
  ScopedVariable socket(kAgentSocketVariable, agent.socket_path());
  {
    auto started = RankClient::Start(RankOptions(plans));  // nvml by default, which the agent replaces
    ASSERT_TRUE(started.ok()) << started.error().message;
    EXPECT_TRUE((*started)->through_agent());
    EXPECT_EQ((*started)->backend_name(), "agent(unix:" + agent.socket_path() + ")");
    EXPECT_TRUE(agent.Control(1).lease.has_value());
  }
  RankClientOptions simulated = RankOptions(plans);
  simulated.backend.kind = "simulated";
  simulated.backend.simulated_gpus = 2;
  simulated.watchdog_setter = false;
  auto own = RankClient::Start(simulated);
  ASSERT_TRUE(own.ok()) << own.error().message;
  EXPECT_FALSE((*own)->through_agent());
  EXPECT_EQ((*own)->backend_name(), "simulated");
  EXPECT_FALSE(agent.Control(1).lease.has_value());
}

TEST(RankClientOnAnAgent, AGpuAnotherProcessHoldsStopsStartNamingIt) {
  AgentTestService agent;
  const testing::ChildProcess holder = testing::StartChild(
      {WATTCUT_BINARY, "gpu", "--agent", agent.socket_path(), "lock", "--gpu", "1", "--sm", "1200", "--hold"},
      "holding the lock");
  ASSERT_GT(holder.pid, 0) << holder.output;
  ScriptedPlans plans;
  RankClientOptions options = RankOptions(plans);
  options.agent_socket = agent.socket_path();
  auto refused = RankClient::Start(options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kConflict);
  EXPECT_NE(refused.error().message.find("rank client: GPU 1 is leased by pid " + std::to_string(holder.pid)),
            std::string::npos)
      << refused.error().message;
  EXPECT_TRUE(Applied(agent.Control(1), 1200));  // the holder's lock stands
  EXPECT_EQ(testing::StopChild(holder.pid, SIGTERM), 0);
  EXPECT_FALSE(agent.Control(1).lease.has_value());

  auto unreachable = options;
  unreachable.agent_socket = agent.folder() + "/absent.sock";
  auto absent = RankClient::Start(unreachable);
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(absent.error().message, "rank client: cannot reach unix:" + unreachable.agent_socket +
                                        ": no socket file there (is the agent running?)");
}

}  // namespace
}  // namespace wattcut
