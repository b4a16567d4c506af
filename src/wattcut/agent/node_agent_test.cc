// The node agent's core on the fake NVML (the real NVML backend's path: the fake's state shows
// what reached "the driver") and on simulated GPUs.
#include "wattcut/agent/node_agent.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "wattcut/agent/agent_state_file.h"
#include "wattcut/gpu/fake_nvml/fake_nvml_backend_testing.h"
#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"
#include "wattcut/gpu/nvml_backend.h"
#include "wattcut/gpu/simulated_backend.h"

namespace wattcut::agent {
namespace {

using fake_nvml::kLibraryPathSet;
using fake_nvml::ScopedFakeNvml;

const LeaseHolder kTrainer = LeaseHolder::Process(getpid(), static_cast<int>(getuid()));

// An agent on the fake NVML whose clocks (and time) the test controls.
struct FakeNodeAgent {
  explicit FakeNodeAgent(ScopedFakeNvml& fake, std::string state_dir = {}, bool require_job_credential = false) {
    (void)kLibraryPathSet;
    auto backend = OpenNvmlBackend();
    EXPECT_TRUE(backend.ok()) << backend.error().message;
    NodeAgentOptions options;
    options.reap_interval_s = 0;
    options.state_dir = std::move(state_dir);
    options.require_job_credential = require_job_credential;
    options.steady_now_s = [this] { return steady_s; };
    options.unix_now_s = [this] { return unix_s; };
    options.log = [this](const std::string& line) { log += line + "\n"; };
    options.observer.on_device_error = [this](const std::string& name) { device_errors.push_back(name); };
    options.observer.on_lease_end = [this](const EndedLease& e) { ended.push_back(e.reason); };
    auto opened = NodeAgent::Open(std::move(*backend), options);
    EXPECT_TRUE(opened.ok()) << opened.error().message;
    agent = std::move(*opened);
    (void)fake;
  }
  double steady_s = 1000;
  double unix_s = 1.7e9;
  std::string log;
  std::vector<std::string> device_errors;
  std::vector<LeaseEnd> ended;
  std::unique_ptr<NodeAgent> agent;
};

std::string Locked(ScopedFakeNvml& fake, int gpu) {
  auto state = fake.Read();
  const std::string p = "gpu" + std::to_string(gpu) + ".";
  return state[p + "locked_min"] + "-" + state[p + "locked_max"];
}

TEST(NodeAgent, DiscoversTheGpusAndResetsThemAtStartup) {
  ScopedFakeNvml fake(fake_nvml::State{{"gpu_count", "2"}, {"gpu1.locked_min", "900"}, {"gpu1.locked_max", "900"}});
  FakeNodeAgent node(fake);
  ASSERT_EQ(node.agent->gpus().size(), 2u);
  const GpuDescription& d = node.agent->gpus()[0];
  EXPECT_EQ(d.sm_clocks_mhz.front(), 1410);
  EXPECT_EQ(d.sm_clocks_mhz.back(), 210);
  EXPECT_EQ(d.memory_clocks_mhz, (std::vector<int>{1593, 1215}));
  ASSERT_TRUE(d.power_limits.has_value());
  EXPECT_EQ(d.power_limits->max_mw, 400000);
  EXPECT_TRUE(d.energy_counter);
  EXPECT_EQ(Locked(fake, 1), "0-0") << "a lock left by a previous run is reset: nobody holds GPU 1";
  EXPECT_TRUE(node.agent->startup_problems().empty());
}

TEST(NodeAgent, ATrainingLockUnderACeilingRunsAtTheCeilingAndComesBackWhenItLifts) {
  ScopedFakeNvml fake;
  FakeNodeAgent node(fake);
  NodeAgent& agent = *node.agent;
  ASSERT_TRUE(agent.TakeLease(kTrainer, {0}, 10).ok());
  ASSERT_TRUE(agent.LockSmClocks(kTrainer, 0, {1410, 1410}).ok());
  EXPECT_EQ(Locked(fake, 0), "1410-1410");
  auto capped = agent.SetCeiling(0, 1275, 30, "low-priority");
  ASSERT_TRUE(capped.ok()) << capped.error().message;
  EXPECT_EQ(Locked(fake, 0), "1275-1275");
  EXPECT_EQ(*capped->sm_applied, (ClockRange{1275, 1275}));
  EXPECT_EQ(capped->sm_lock, (ClockRange{1410, 1410})) << "the training lock is kept under the ceiling";
  ASSERT_TRUE(agent.ClearCeiling(0).ok());
  EXPECT_EQ(Locked(fake, 0), "1410-1410") << "lifting the ceiling brings the training lock back at once";
  // A ceiling alone bounds the clock from above only; a ceiling between supported clocks rounds down.
  ASSERT_TRUE(agent.UnlockSmClocks(kTrainer, 0).ok());
  auto rounded = agent.SetCeiling(0, 1280, 30, "");
  ASSERT_TRUE(rounded.ok());
  EXPECT_EQ(rounded->ceiling->mhz, 1275);
  EXPECT_EQ(Locked(fake, 0), "210-1275");
}

TEST(NodeAgent, ALeaseEndingUndoesWhatItsHolderSetButNotTheCeiling) {
  ScopedFakeNvml fake(fake_nvml::State{{"gpu_count", "2"}});
  FakeNodeAgent node(fake);
  NodeAgent& agent = *node.agent;
  auto lease = agent.TakeLease(kTrainer, {0, 1}, 10);
  ASSERT_TRUE(lease.ok());
  ASSERT_TRUE(agent.LockSmClocks(kTrainer, 0, {1200, 1200}).ok());
  ASSERT_TRUE(agent.LockSmClocks(kTrainer, 1, {1200, 1200}).ok());
  ASSERT_TRUE(agent.LockMemoryClocks(kTrainer, 0, {1593, 1593}).ok());
  ASSERT_TRUE(agent.SetPowerLimit(kTrainer, 0, 300).ok());
  ASSERT_TRUE(agent.SetCeiling(1, 1005, 60, "brake").ok());
  EXPECT_EQ(fake.Read()["gpu0.power_limit_mw"], "300000");
  node.steady_s += 10;  // the ttl runs out without a renewal
  agent.Reap();
  ASSERT_EQ(node.ended, (std::vector<LeaseEnd>{LeaseEnd::kExpired}));
  EXPECT_EQ(Locked(fake, 0), "0-0");
  EXPECT_EQ(fake.Read()["gpu0.mem_locked"], "0");
  EXPECT_EQ(fake.Read()["gpu0.power_limit_mw"], "400000");
  EXPECT_EQ(Locked(fake, 1), "210-1005") << "GPU 1 goes back to its ceiling, not to its defaults";
}

TEST(NodeAgent, OnlyTheHolderLocksAndRequestsAreCheckedAgainstTheGpu) {
  ScopedFakeNvml fake;
  FakeNodeAgent node(fake);
  NodeAgent& agent = *node.agent;
  const LeaseHolder other = LeaseHolder::Process(getppid(), 1234);
  auto unleased = agent.LockSmClocks(kTrainer, 0, {1200, 1200});
  ASSERT_FALSE(unleased.ok());
  EXPECT_EQ(unleased.error().code, ErrorCode::kPermissionDenied);
  ASSERT_TRUE(agent.TakeLease(kTrainer, {0}, 10).ok());
  auto taken = agent.TakeLease(other, {0}, 10);
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().code, ErrorCode::kConflict);
  EXPECT_NE(taken.error().message.find("pid " + std::to_string(getpid())), std::string::npos);
  EXPECT_EQ(agent.LockSmClocks(other, 0, {1200, 1200}).error().code, ErrorCode::kPermissionDenied);
  auto unsupported = agent.LockSmClocks(kTrainer, 0, {1201, 1201});
  ASSERT_FALSE(unsupported.ok());
  EXPECT_EQ(unsupported.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(unsupported.error().message.find("does not support an SM clock of 1201 MHz"), std::string::npos);
  EXPECT_EQ(agent.LockSmClocks(kTrainer, 0, {1410, 1200}).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(agent.LockSmClocks(kTrainer, 7, {1200, 1200}).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(agent.SetPowerLimit(kTrainer, 0, 50).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(agent.LockMemoryClocks(kTrainer, 0, {1000, 1000}).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(agent.SetCeiling(0, 100, 10, "").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(agent.SetCeiling(3, 1200, 10, "").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(Locked(fake, 0), "0-0") << "nothing refused reached NVML";
}

// What is watched is what holds a lease: a process refused a lease (no such GPU, or a GPU another
// holds) is not watched, so its exit leaves no descriptor behind and no readable pidfd that would
// wake the reaper for ever.
TEST(NodeAgent, AProcessRefusedALeaseIsNotWatched) {
  ScopedFakeNvml fake;
  FakeNodeAgent node(fake);
  NodeAgent& agent = *node.agent;
  const LeaseHolder other = LeaseHolder::Process(getppid(), 1234);
  EXPECT_EQ(agent.TakeLease(kTrainer, {7}, 10).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(agent.watched_processes(), 0u);
  auto lease = agent.TakeLease(kTrainer, {0}, 10);
  ASSERT_TRUE(lease.ok()) << lease.error().message;
  EXPECT_EQ(agent.watched_processes(), 1u);
  EXPECT_EQ(agent.TakeLease(other, {0}, 10).error().code, ErrorCode::kConflict);
  EXPECT_EQ(agent.watched_processes(), 1u) << "the conflict's holder is not watched; the lease's holder still is";
  EXPECT_EQ(agent.TakeLease(kTrainer, {9}, 10).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(agent.watched_processes(), 1u) << "a holder's refused second lease keeps its first one watched";
  ASSERT_TRUE(agent.ReleaseLease(lease->id, kTrainer).ok());
  EXPECT_EQ(agent.watched_processes(), 0u);
}

TEST(NodeAgent, AnNvmlErrorComesBackForItsGpuWithNvmlsName) {
  ScopedFakeNvml fake(fake_nvml::State{{"gpu_count", "2"}});
  FakeNodeAgent node(fake);
  NodeAgent& agent = *node.agent;
  ASSERT_TRUE(agent.TakeLease(kTrainer, {0, 1}, 10).ok());
  fake.Set("gpu1.fail.nvmlDeviceSetGpuLockedClocks", "4");  // NVML_ERROR_NO_PERMISSION
  auto failed = agent.LockSmClocks(kTrainer, 1, {1200, 1200});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::kDeviceError);
  EXPECT_NE(failed.error().message.find("NVML_ERROR_NO_PERMISSION"), std::string::npos) << failed.error().message;
  EXPECT_NE(failed.error().message.find("GPU 1"), std::string::npos) << failed.error().message;
  EXPECT_EQ(node.device_errors, (std::vector<std::string>{"NVML_ERROR_NO_PERMISSION"}));
  EXPECT_TRUE(agent.LockSmClocks(kTrainer, 0, {1200, 1200}).ok()) << "GPU 0 is not affected";
  fake.Erase("gpu1.fail.nvmlDeviceSetGpuLockedClocks");
  EXPECT_TRUE(agent.LockSmClocks(kTrainer, 1, {1200, 1200}).ok()) << "the next change tries again";
  EXPECT_EQ(Locked(fake, 1), "1200-1200");
}

TEST(NodeAgent, AKilledHolderLosesItsLeaseAtTheNextReap) {
  ScopedFakeNvml fake;
  FakeNodeAgent node(fake);
  NodeAgent& agent = *node.agent;
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  const LeaseHolder holder = LeaseHolder::Process(child, 0);
  ASSERT_TRUE(agent.TakeLease(holder, {0}, 3600).ok());
  ASSERT_TRUE(agent.LockSmClocks(holder, 0, {1005, 1005}).ok());
  agent.Reap();
  EXPECT_EQ(Locked(fake, 0), "1005-1005") << "alive: the lease holds";
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  agent.Reap();  // no time passed: the ttl (an hour) has nothing to do with it
  EXPECT_EQ(node.ended, (std::vector<LeaseEnd>{LeaseEnd::kHolderExited}));
  EXPECT_EQ(Locked(fake, 0), "0-0");
}

TEST(NodeAgent, ACeilingRunsOutItsLeaseAndOutlivesAnAgentRestartUntilThen) {
  ScopedFakeNvml fake(fake_nvml::State{{"gpu_count", "2"}});
  const std::string dir = std::filesystem::path(fake.path()).parent_path() / "agent-state";
  std::filesystem::create_directories(dir);
  // The first agent dies without undoing anything, as under SIGKILL: only what it stored is left.
  const pid_t first = fork();
  if (first == 0) {
    FakeNodeAgent node(fake, dir);
    const LeaseHolder self = LeaseHolder::Process(getpid(), 0);
    const bool ok = node.agent->SetCeiling(0, 1005, 60, "brake").ok() && node.agent->TakeLease(self, {1}, 10).ok() &&
                    node.agent->SetPowerLimit(self, 1, 250).ok();
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(first, &status, 0), first);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(fake.Read()["gpu1.power_limit_mw"], "250000");
  fake.Set("gpu1.locked_min", "900");
  fake.Set("gpu1.locked_max", "900");
  FakeNodeAgent restarted(fake, dir);
  restarted.unix_s = 1.7e9 + 10;
  EXPECT_EQ(Locked(fake, 0), "210-1005") << "the ceiling is still in force";
  EXPECT_EQ(Locked(fake, 1), "0-0") << "an unheld GPU is reset";
  EXPECT_EQ(fake.Read()["gpu1.power_limit_mw"], "400000") << "the power limit the last run changed is put back";
  restarted.unix_s = 1.7e9 + 61;
  restarted.agent->Reap();
  EXPECT_EQ(Locked(fake, 0), "0-0") << "and lifted when its lease runs out";
}

TEST(NodeAgent, ACorruptStateFileIsKeptAsideAndTheAgentStarts) {
  ScopedFakeNvml fake;
  const std::string dir = std::filesystem::path(fake.path()).parent_path() / "agent-state";
  std::filesystem::create_directories(dir);
  std::ofstream(AgentStatePath(dir)) << "{ not json";
  FakeNodeAgent node(fake, dir);
  ASSERT_NE(node.agent, nullptr);
  ASSERT_EQ(node.agent->startup_problems().size(), 1u);
  EXPECT_NE(node.agent->startup_problems()[0].find("kept as"), std::string::npos);
  int aside = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    aside += entry.path().filename().string().find("agent-state.json.corrupt-") == 0;
  }
  EXPECT_EQ(aside, 1);
}

// Batch jobs: a GPU node of 4 GPUs whose energy counters only the test moves.
fake_nvml::State JobNode() { return fake_nvml::State{{"gpu_count", "4"}, {"idle_power_mw", "0"}, {"load", "0"}}; }

LeaseHolder JobProcess(int uid, const std::string& job) {
  LeaseHolder holder = LeaseHolder::Process(getpid(), uid);
  holder.job_id = job;
  return holder;
}

TEST(NodeAgentJobs, AJobsCredentialLeasesOnlyItsGpusAndOnlyForItsOwner) {
  ScopedFakeNvml fake(JobNode());
  FakeNodeAgent node(fake, {}, /*require_job_credential=*/true);
  NodeAgent& agent = *node.agent;
  auto job = agent.RegisterJob("77", 1234, std::vector<int>{2, 3});
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_TRUE(job->created);
  EXPECT_EQ(job->job.credential.size(), 64u);
  ASSERT_TRUE(agent.JobOfCredential(job->job.credential).has_value());
  EXPECT_EQ(agent.JobOfCredential(job->job.credential)->job_id, "77");
  EXPECT_FALSE(agent.JobOfCredential(std::string(64, 'a')).has_value());

  EXPECT_TRUE(agent.TakeLease(JobProcess(1234, "77"), {2, 3}, 10).ok());
  auto other_gpu = agent.TakeLease(JobProcess(1234, "77"), {1}, 10);
  ASSERT_FALSE(other_gpu.ok());
  EXPECT_EQ(other_gpu.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(other_gpu.error().message, "GPU 1 is not one of job 77's GPUs (2-3)");
  auto other_user = agent.TakeLease(JobProcess(4321, "77"), {1}, 10);
  ASSERT_FALSE(other_user.ok());
  EXPECT_EQ(other_user.error().message, "the credential of job 77 is for uid 1234, not for uid 4321");
  auto no_credential = agent.TakeLease(LeaseHolder::Process(getpid(), 4321), {0}, 10);
  ASSERT_FALSE(no_credential.ok());
  EXPECT_NE(no_credential.error().message.find("present your job's credential"), std::string::npos);
  auto no_credential_zeusd = agent.ImplicitLeaseHolder(LeaseHolder::Process(getpid(), 4321), 0);
  ASSERT_FALSE(no_credential_zeusd.ok()) << "zeusd's setters on the socket obey the same rule";
  EXPECT_EQ(no_credential_zeusd.error().code, ErrorCode::kPermissionDenied);
  EXPECT_TRUE(agent.TakeLease(LeaseHolder::Process(getpid(), 0), {0}, 10).ok()) << "root is the admin";
}

TEST(NodeAgentJobs, WithoutRequireJobCredentialAProcessWithoutOneLeasesAsBefore) {
  ScopedFakeNvml fake(JobNode());
  FakeNodeAgent node(fake);
  ASSERT_TRUE(node.agent->RegisterJob("77", 1234, std::nullopt).ok());
  EXPECT_TRUE(node.agent->TakeLease(LeaseHolder::Process(getpid(), 4321), {0}, 10).ok());
  auto job_gpus = node.agent->Jobs();
  ASSERT_EQ(job_gpus.size(), 1u);
  EXPECT_EQ(job_gpus[0].gpus, (std::vector<int>{0, 1, 2, 3})) << "no GPUs named: every GPU of the node";
}

TEST(NodeAgentJobs, RegisteringAgainKeepsTheCredentialAndAddsGpusButNotAnotherOwner) {
  ScopedFakeNvml fake(JobNode());
  FakeNodeAgent node(fake);
  auto first = node.agent->RegisterJob("77", 1234, std::vector<int>{1});
  ASSERT_TRUE(first.ok());
  auto again = node.agent->RegisterJob("77", 1234, std::vector<int>{0});
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->job.credential, first->job.credential);
  EXPECT_EQ(again->job.gpus, (std::vector<int>{0, 1}));
  auto without_gpus = node.agent->RegisterJob("77", 1234, std::nullopt);
  ASSERT_TRUE(without_gpus.ok());
  EXPECT_EQ(without_gpus->job.gpus, (std::vector<int>{0, 1})) << "a registered job keeps its GPUs";
  auto stolen = node.agent->RegisterJob("77", 99, std::vector<int>{0});
  ASSERT_FALSE(stolen.ok());
  EXPECT_EQ(stolen.error().code, ErrorCode::kConflict);
  auto missing = node.agent->RegisterJob("78", 1234, std::vector<int>{9});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  auto bad_id = node.agent->RegisterJob("7 8", 1234, std::nullopt);
  ASSERT_FALSE(bad_id.ok());
  EXPECT_EQ(bad_id.error().code, ErrorCode::kInvalidArgument);
}

TEST(NodeAgentJobs, EndingAJobEndsItsLeasesResetsItsGpusAndTellsTheirEnergy) {
  ScopedFakeNvml fake(JobNode());
  fake.Set("gpu2.energy_mj", "1000000");
  fake.Set("gpu3.energy_mj", "5000000");
  FakeNodeAgent node(fake);
  NodeAgent& agent = *node.agent;
  auto job = agent.RegisterJob("77", 1234, std::vector<int>{2, 3});
  ASSERT_TRUE(job.ok());
  const LeaseHolder task = JobProcess(1234, "77");
  ASSERT_TRUE(agent.TakeLease(task, {2}, 10).ok());
  ASSERT_TRUE(agent.LockSmClocks(task, 2, {810, 810}).ok());
  ASSERT_TRUE(agent.LockMemoryClocks(task, 2, {1215, 1215}).ok());
  auto lease3 = agent.TakeLease(task, {3}, 10);
  ASSERT_TRUE(lease3.ok());
  ASSERT_TRUE(agent.LockSmClocks(task, 3, {960, 960}).ok());
  // GPU 3's lease ends before the job does (its process was killed), and something left GPU 3
  // locked behind the agent's back: the job's end resets it all the same.
  ASSERT_TRUE(agent.ReleaseLease(lease3->id, task).ok());
  fake.Set("gpu3.locked_min", "600");
  fake.Set("gpu3.locked_max", "600");
  fake.Set("gpu2.energy_mj", "4500000");  // 3500 J
  fake.Set("gpu3.energy_mj", "5250000");  // 250 J
  ASSERT_EQ(Locked(fake, 2), "810-810");

  auto end = agent.EndJob("77");
  ASSERT_TRUE(end.ok()) << end.error().message;
  EXPECT_EQ(end->leases_ended, 1);
  EXPECT_EQ(node.ended.back(), LeaseEnd::kJobEnded);
  EXPECT_EQ(end->reset_gpus, (std::vector<int>{2, 3}));
  EXPECT_TRUE(end->problems.empty());
  EXPECT_EQ(Locked(fake, 2), "0-0");
  EXPECT_EQ(Locked(fake, 3), "0-0");
  EXPECT_EQ(fake.Read()["gpu2.mem_locked"], "0");
  ASSERT_TRUE(end->total_gpu_energy_j.has_value());
  EXPECT_DOUBLE_EQ(*end->total_gpu_energy_j, 3750.0);
  EXPECT_DOUBLE_EQ(*end->gpu_energy_j.at(2), 3500.0);
  EXPECT_NE(node.log.find("job 77 of uid 1234 ended"), std::string::npos) << node.log;
  EXPECT_NE(node.log.find("used 3750.0 J"), std::string::npos) << node.log;

  auto after = agent.JobOfCredential(job->job.credential);
  ASSERT_TRUE(after.has_value());
  EXPECT_TRUE(after->ended);
  auto late = agent.TakeLease(task, {2}, 10);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().message, "job 77 has ended: its credential no longer works");
  auto twice = agent.EndJob("77");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, ErrorCode::kNotFound);
}

TEST(NodeAgentJobs, AJobThatNeverUsedItsGpusIsNotResetAndAGpuAnotherHoldsIsLeftToIt) {
  ScopedFakeNvml fake(JobNode());
  FakeNodeAgent node(fake);
  NodeAgent& agent = *node.agent;
  ASSERT_TRUE(agent.RegisterJob("off", 1234, std::vector<int>{0}).ok());
  auto untouched = agent.EndJob("off");
  ASSERT_TRUE(untouched.ok());
  EXPECT_TRUE(untouched->reset_gpus.empty());
  EXPECT_NE(node.log.find("its GPUs were not used"), std::string::npos);

  ASSERT_TRUE(agent.RegisterJob("77", 1234, std::vector<int>{1}).ok());
  auto lease = agent.TakeLease(JobProcess(1234, "77"), {1}, 10);
  ASSERT_TRUE(lease.ok());
  ASSERT_TRUE(agent.ReleaseLease(lease->id, JobProcess(1234, "77")).ok());
  const LeaseHolder admin = LeaseHolder::Process(getpid(), 0);
  ASSERT_TRUE(agent.TakeLease(admin, {1}, 10).ok());
  ASSERT_TRUE(agent.LockSmClocks(admin, 1, {1110, 1110}).ok());
  auto end = agent.EndJob("77");
  ASSERT_TRUE(end.ok());
  EXPECT_TRUE(end->reset_gpus.empty());
  ASSERT_EQ(end->problems.size(), 1u);
  EXPECT_NE(end->problems[0].find("GPU 1: not reset: leased by pid"), std::string::npos) << end->problems[0];
  EXPECT_EQ(Locked(fake, 1), "1110-1110");
}

TEST(NodeAgentJobs, AJobAndItsCredentialOutliveARestartOfTheAgent) {
  ScopedFakeNvml fake(JobNode());
  const std::string dir = std::filesystem::path(fake.path()).parent_path() / "agent-state-jobs";
  std::string credential;
  {
    FakeNodeAgent node(fake, dir, true);
    auto job = node.agent->RegisterJob("77", 1234, std::vector<int>{0, 1});
    ASSERT_TRUE(job.ok());
    credential = job->job.credential;
    ASSERT_TRUE(node.agent->TakeLease(JobProcess(1234, "77"), {0}, 10).ok());
  }
  FakeNodeAgent restarted(fake, dir, true);
  auto match = restarted.agent->JobOfCredential(credential);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->job_id, "77");
  EXPECT_FALSE(match->ended);
  EXPECT_NE(restarted.log.find("job 77 (uid 1234, GPUs 0-1) kept from before the restart"), std::string::npos);
  auto jobs = restarted.agent->Jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_TRUE(jobs[0].touched);
  EXPECT_TRUE(restarted.agent->TakeLease(JobProcess(1234, "77"), {1}, 10).ok());
  EXPECT_TRUE(restarted.agent->EndJob("77").ok());
}

TEST(NodeAgent, ReadingsOfSimulatedGpus) {
  auto backend = SimulatedBackend::Create("a100-sxm", 2);
  ASSERT_TRUE(backend.ok());
  NodeAgentOptions options;
  options.reap_interval_s = 0;
  options.log = [](const std::string&) {};
  auto agent = NodeAgent::Open(std::move(*backend), options);
  ASSERT_TRUE(agent.ok()) << agent.error().message;
  auto readings = (*agent)->Read();
  ASSERT_EQ(readings.size(), 2u);
  EXPECT_GT(*readings[0].power_w, 0);
  EXPECT_TRUE(readings[0].energy_mj.has_value());
  EXPECT_EQ(*readings[1].sm_clock_mhz, (*agent)->gpus()[1].sm_clocks_mhz.front());
  EXPECT_TRUE(readings[0].errors.empty());
}

TEST(NodeAgent, TheReaperThreadEndsAKilledHoldersLeaseWithoutBeingAsked) {
  ScopedFakeNvml fake;
  auto backend = OpenNvmlBackend();
  ASSERT_TRUE(backend.ok());
  NodeAgentOptions options;
  options.log = [](const std::string&) {};
  auto agent = NodeAgent::Open(std::move(*backend), options);
  ASSERT_TRUE(agent.ok());
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  const LeaseHolder holder = LeaseHolder::Process(child, 0);
  ASSERT_TRUE((*agent)->TakeLease(holder, {0}, 3600).ok());
  ASSERT_TRUE((*agent)->LockSmClocks(holder, 0, {1005, 1005}).ok());
  const auto killed = std::chrono::steady_clock::now();
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  // Bounded wait (not a time limit on the agent): the lease's ttl is an hour, so only the exit ends it.
  for (int i = 0; i < 600 && Locked(fake, 0) != "0-0"; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(Locked(fake, 0), "0-0");
  std::cout << "reset " << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - killed).count()
            << " ms after the SIGKILL\n";
}

}  // namespace
}  // namespace wattcut::agent
