// The plugin's agent client against a real agent (AgentService in this process, simulated GPUs):
// what the prolog, a task and the epilog ask, as root on the socket.
#include "wattcut/slurm/agent_jobs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/agent/agent_test_service.h"

namespace wattcut::slurm {
namespace {

TEST(AgentJobs, ATaskGetsTheJobsCredentialAndTheEpilogEndsTheJobWithItsEnergy) {
  if (getuid() != 0) GTEST_SKIP() << "registering a job is root's on the agent's socket";
  testing::AgentTestService agent(4);
  auto prolog = RegisterJobAtAgent(agent.socket_path(), "4242", 1000, std::vector<int>{2, 3});
  ASSERT_TRUE(prolog.ok()) << prolog.error().message;
  EXPECT_EQ(prolog->gpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(prolog->credential.size(), 64u);
  auto task = RegisterJobAtAgent(agent.socket_path(), "4242", 1000, std::nullopt);
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->credential, prolog->credential) << "every task of the job gets the one credential";
  EXPECT_EQ(task->gpus, (std::vector<int>{2, 3})) << "a task without $SLURM_JOB_GPUS keeps the job's GPUs";

  auto other_owner = RegisterJobAtAgent(agent.socket_path(), "4242", 1001, std::nullopt);
  ASSERT_FALSE(other_owner.ok());
  EXPECT_EQ(other_owner.error().code, ErrorCode::kConflict);
  EXPECT_NE(other_owner.error().message.find("the agent answered 409: job 4242 is registered for uid 1000"),
            std::string::npos)
      << other_owner.error().message;

  auto end = EndJobAtAgent(agent.socket_path(), "4242");
  ASSERT_TRUE(end.ok()) << end.error().message;
  EXPECT_EQ(end->gpus, (std::vector<int>{2, 3}));
  ASSERT_TRUE(end->gpu_energy_j.has_value());
  EXPECT_GE(*end->gpu_energy_j, 0);
  EXPECT_EQ(end->leases_ended, 0);
  auto again = EndJobAtAgent(agent.socket_path(), "4242");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kNotFound);
}

TEST(AgentJobs, AnAgentThatIsDownIsUnavailableNamingItsSocket) {
  auto registered = RegisterJobAtAgent("/nonexistent/agent.sock", "1", 1000, std::nullopt);
  ASSERT_FALSE(registered.ok());
  EXPECT_EQ(registered.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(registered.error().message.find("registering job 1 at the agent (unix:/nonexistent/agent.sock)"),
            std::string::npos)
      << registered.error().message;
  auto ended = EndJobAtAgent("/nonexistent/agent.sock", "1");
  ASSERT_FALSE(ended.ok());
  EXPECT_EQ(ended.error().code, ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace wattcut::slurm
