#include "wattcut/runtime/frequency_setter.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wattcut/gpu/fake_nvml/fake_nvml_backend_testing.h"
#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"
#include "wattcut/gpu/nvml_backend.h"
#include "wattcut/gpu/simulated_backend.h"

namespace wattcut {
namespace {

using fake_nvml::kLibraryPathSet;
using fake_nvml::ScopedFakeNvml;
using fake_nvml::State;

// ---- In-process thread over the simulated backend ----

class ThreadSetterTest : public ::testing::Test {
 protected:
  std::unique_ptr<SimulatedBackend> backend_ =
      std::move(SimulatedBackend::Create("a100-sxm", 2, std::make_shared<ManualClock>())).value();
};

TEST_F(ThreadSetterTest, LocksMemoryAppliesRequestsAndResetsOnStop) {
  auto setter = StartThreadFrequencySetter(*backend_, 1);
  ASSERT_TRUE(setter.ok()) << setter.error().message;
  EXPECT_TRUE(backend_->memory_clocks_locked(1));
  (*setter)->SetFrequency(1200);
  ASSERT_TRUE((*setter)->WaitUntilApplied().ok());
  EXPECT_EQ(*backend_->SmClockMhz(1), 1200);
  EXPECT_EQ(*backend_->SmClockMhz(0), 1410);
  EXPECT_EQ((*setter)->stats().applied_mhz, 1200);
  ASSERT_TRUE((*setter)->Stop().ok());
  EXPECT_FALSE(backend_->gpu_clocks_locked(1));
  EXPECT_FALSE(backend_->memory_clocks_locked(1));
  EXPECT_TRUE((*setter)->Stop().ok());  // idempotent
}

TEST_F(ThreadSetterTest, AppliesOnlyTheLatestAndSkipsUnchanged) {
  auto setter = std::move(StartThreadFrequencySetter(*backend_, 0)).value();
  for (int round = 0; round < 50; ++round) {
    for (int f = 1410; f >= 900; f -= 15) setter->SetFrequency(f);
  }
  setter->SetFrequency(1005);
  ASSERT_TRUE(setter->WaitUntilApplied().ok());
  EXPECT_EQ(*backend_->SmClockMhz(0), 1005);
  const FrequencySetterStats stats = setter->stats();
  // 50 * 35 + 1 requests; far fewer locks, since only the latest one is applied per wake-up.
  EXPECT_LE(stats.applied, 50u * 35u + 1u);
  EXPECT_EQ(stats.applied_mhz, 1005);
  // Same frequency again: nothing reaches the worker.
  const uint64_t requested = stats.requested;
  setter->SetFrequency(1005);
  ASSERT_TRUE(setter->WaitUntilApplied().ok());
  EXPECT_EQ(setter->stats().requested, requested);
  // Back and forth to the applied value: the worker skips it.
  setter->SetFrequency(1200);
  setter->SetFrequency(1005);
  ASSERT_TRUE(setter->WaitUntilApplied().ok());
  EXPECT_EQ(*backend_->SmClockMhz(0), 1005);
}

TEST_F(ThreadSetterTest, CanBeWokenPerRequestInsteadOfPolling) {
  auto setter = std::move(StartThreadFrequencySetter(*backend_, 0, false, /*poll_interval_s=*/0)).value();
  for (int f : {1200, 1000, 1305}) {
    setter->SetFrequency(f);
    ASSERT_TRUE(setter->WaitUntilApplied().ok());
    EXPECT_EQ(*backend_->SmClockMhz(0), f);
  }
  EXPECT_TRUE(setter->Stop().ok());
  EXPECT_FALSE(backend_->gpu_clocks_locked(0));
}

TEST_F(ThreadSetterTest, ReportsFailedLocks) {
  auto setter = std::move(StartThreadFrequencySetter(*backend_, 0)).value();
  setter->SetFrequency(2000);
  Status status = setter->WaitUntilApplied();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message, "cannot lock GPU 0 SM clocks to 2000-2000 MHz: supported 210-1410 MHz");
  EXPECT_EQ(setter->stats().failed, 1u);
  setter->SetFrequency(1300);
  EXPECT_TRUE(setter->WaitUntilApplied().ok());
}

// A lock the driver refused is tried again when the same clock is asked for next (a profiler's
// step measured again, an instruction's clock), not skipped as if it were in place.
TEST(ThreadSetterOnNvmlTest, AClockWhoseLockFailedIsTriedAgainWhenAskedForAgain) {
  ASSERT_TRUE(kLibraryPathSet);
  ScopedFakeNvml fake;
  auto backend = OpenNvmlBackend();
  ASSERT_TRUE(backend.ok()) << backend.error().message;
  auto setter = std::move(StartThreadFrequencySetter(**backend, 0)).value();
  fake.Set("fail.nvmlDeviceSetGpuLockedClocks", "999");
  setter->SetFrequency(1110);
  EXPECT_FALSE(setter->WaitUntilApplied().ok());
  fake.Erase("fail.nvmlDeviceSetGpuLockedClocks");
  setter->SetFrequency(1110);
  EXPECT_TRUE(setter->WaitUntilApplied().ok());
  EXPECT_EQ(setter->stats().applied_mhz, 1110);
  EXPECT_EQ(fake.Read().at("gpu0.locked_max"), "1110");
  // Once in place, the same clock again reaches nothing.
  const uint64_t requested = setter->stats().requested;
  setter->SetFrequency(1110);
  EXPECT_TRUE(setter->WaitUntilApplied().ok());
  EXPECT_EQ(setter->stats().requested, requested);
}

TEST(WatchdogSetterTest, AClockWhoseLockFailedIsTriedAgainWhenAskedForAgain) {
  ASSERT_TRUE(kLibraryPathSet);
  ScopedFakeNvml fake;
  auto setter = StartWatchdogFrequencySetter({.gpu = 0});
  ASSERT_TRUE(setter.ok()) << setter.error().message;
  fake.Set("fail.nvmlDeviceSetGpuLockedClocks", "999");
  (*setter)->SetFrequency(1110);
  EXPECT_FALSE((*setter)->WaitUntilApplied().ok());
  fake.Erase("fail.nvmlDeviceSetGpuLockedClocks");
  (*setter)->SetFrequency(1110);
  EXPECT_TRUE((*setter)->WaitUntilApplied().ok());
  EXPECT_EQ(fake.Read().at("gpu0.locked_max"), "1110");
  EXPECT_TRUE((*setter)->Stop().ok());
}

TEST_F(ThreadSetterTest, RejectsAMissingGpu) {
  auto setter = StartThreadFrequencySetter(*backend_, 2);
  ASSERT_FALSE(setter.ok());
  EXPECT_EQ(setter.error().message, "GPU 2 does not exist (2 GPUs)");
}

// ---- Watchdog process over NVML (the fake library) ----

TEST(WatchdogSetterTest, LocksThroughNvmlAndResetsOnStop) {
  ASSERT_TRUE(kLibraryPathSet);
  ScopedFakeNvml fake;
  auto setter = StartWatchdogFrequencySetter({.gpu = 1});
  ASSERT_TRUE(setter.ok()) << setter.error().message;
  const int pid = WatchdogPid(**setter);
  ASSERT_GT(pid, 0);
  EXPECT_NE(pid, getpid());
  EXPECT_EQ(fake.Read()["gpu1.mem_locked"], "1593");
  (*setter)->SetFrequency(1200);
  ASSERT_TRUE((*setter)->WaitUntilApplied().ok());
  EXPECT_EQ(fake.Read()["gpu1.locked_max"], "1200");
  (*setter)->SetFrequency(1100);
  (*setter)->SetFrequency(1000);
  ASSERT_TRUE((*setter)->WaitUntilApplied().ok());
  EXPECT_EQ(fake.Read()["gpu1.locked_max"], "1000");
  EXPECT_EQ((*setter)->stats().applied_mhz, 1000);
  ASSERT_TRUE((*setter)->Stop().ok());
  EXPECT_EQ(fake.Read()["gpu1.locked_max"], "0");
  EXPECT_EQ(fake.Read()["gpu1.mem_locked"], "0");
  // The NVML calls came from the watchdog process, not from this one.
  EXPECT_NE(fake.Log().find(std::to_string(pid) + " nvmlDeviceSetGpuLockedClocks(GPU 1, 1200,1200) -> 0"),
            std::string::npos);
  EXPECT_NE(fake.Log().find(std::to_string(pid) + " nvmlDeviceResetGpuLockedClocks(GPU 1) -> 0"), std::string::npos);
  EXPECT_EQ(("\n" + fake.Log()).find("\n" + std::to_string(getpid()) + " "), std::string::npos);
}

TEST(WatchdogSetterTest, CanBeWokenPerRequestInsteadOfPolling) {
  ScopedFakeNvml fake;
  auto setter = std::move(StartWatchdogFrequencySetter({.gpu = 0, .poll_interval_s = 0})).value();
  for (int f : {1200, 1000, 1305}) {
    setter->SetFrequency(f);
    ASSERT_TRUE(setter->WaitUntilApplied().ok());
    EXPECT_EQ(fake.Read()["gpu0.locked_max"], std::to_string(f));
  }
  EXPECT_TRUE(setter->Stop().ok());
  EXPECT_EQ(fake.Read()["gpu0.locked_max"], "0");
}

TEST(WatchdogSetterTest, PermissionErrorsReachTheTrainingProcess) {
  ScopedFakeNvml fake(State{{"fail.nvmlDeviceSetGpuLockedClocks", "4"}});
  auto setter = std::move(StartWatchdogFrequencySetter({.gpu = 0})).value();
  setter->SetFrequency(1200);
  Status status = setter->WaitUntilApplied();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("NVML_ERROR_NO_PERMISSION"), std::string::npos);
  EXPECT_NE(status.error().message.find("root or CAP_SYS_ADMIN"), std::string::npos);
  EXPECT_EQ(setter->stats().failed, 1u);
  EXPECT_TRUE(setter->Stop().ok());
}

TEST(WatchdogSetterTest, MemoryLockNotSupportedIsAWarningUnlessRequired) {
  ScopedFakeNvml fake(State{{"fail.nvmlDeviceSetMemoryLockedClocks", "3"}});
  auto lenient = StartWatchdogFrequencySetter({.gpu = 0});
  ASSERT_TRUE(lenient.ok()) << lenient.error().message;
  EXPECT_NE((*lenient)->stats().last_error.find("memory clock not locked: nvmlDeviceSetMemoryLockedClocks(GPU 0, 1593, "
                                                "1593): Not Supported"),
            std::string::npos);
  EXPECT_TRUE((*lenient)->Stop().ok());
  auto strict = StartWatchdogFrequencySetter({.gpu = 0, .require_memory_lock = true});
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.error().message.find("NVML_ERROR_NOT_SUPPORTED"), std::string::npos);
}

TEST(WatchdogSetterTest, StartFailuresAreExplained) {
  {
    ScopedFakeNvml fake(State{{"gpu_count", "0"}});
    auto setter = StartWatchdogFrequencySetter({.gpu = 0});
    ASSERT_FALSE(setter.ok());
    EXPECT_EQ(setter.error().message.rfind("NVML (libnvidia-ml.so.1) sees no GPU", 0), 0u) << setter.error().message;
  }
  {
    ScopedFakeNvml fake;
    auto setter = StartWatchdogFrequencySetter({.gpu = 4});
    ASSERT_FALSE(setter.ok());
    EXPECT_EQ(setter.error().message, "GPU 4 does not exist (2 GPUs)");
  }
  {
    auto setter = StartWatchdogFrequencySetter({.gpu = 0, .nvml_library = "libnvidia-ml-missing.so.1"});
    ASSERT_FALSE(setter.ok());
    EXPECT_NE(setter.error().message.find("cannot load NVML"), std::string::npos);
  }
  {
    auto setter = StartWatchdogFrequencySetter({.gpu = 0, .helper_path = "/nonexistent/wattcut-freq-setter"});
    ASSERT_FALSE(setter.ok());
    EXPECT_EQ(setter.error().message,
              "cannot run the frequency watchdog '/nonexistent/wattcut-freq-setter': not found or not executable "
              "(set WATTCUT_FREQ_SETTER to its path)");
  }
}

TEST(WatchdogSetterTest, DryRunChangesNothing) {
  ScopedFakeNvml fake;
  auto setter = std::move(StartWatchdogFrequencySetter({.gpu = 0, .dry_run = true})).value();
  setter->SetFrequency(1200);
  ASSERT_TRUE(setter->WaitUntilApplied().ok());
  EXPECT_TRUE(setter->Stop().ok());
  EXPECT_EQ(fake.Read().count("gpu0.locked_max"), 0u);
  EXPECT_EQ(fake.Read().count("gpu0.mem_locked"), 0u);
  EXPECT_EQ(fake.Log().find("nvmlDeviceSet"), std::string::npos);
}

// A training process (a child of the test) starts a watchdog, locks 1200 MHz and reports the
// watchdog's pid; then it is killed with `signal`. The test is a child subreaper, so the
// orphaned watchdog becomes its child and can be waited for.
void ExpectResetAfterTrainerDies(int signal_number, bool trainer_forks_a_worker = false) {
  ScopedFakeNvml fake;
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t trainer = fork();
  ASSERT_GE(trainer, 0);
  if (trainer == 0) {
    close(pipe_fds[0]);
    auto setter = StartWatchdogFrequencySetter({.gpu = 0});
    if (!setter.ok()) _exit(3);
    (*setter)->SetFrequency(1200);
    if (!(*setter)->WaitUntilApplied().ok()) _exit(4);
    int pids[2] = {WatchdogPid(**setter), 0};
    if (trainer_forks_a_worker) {
      // Like a data-loader worker: forked without exec, so it holds a copy of the wake-up socket.
      pids[1] = fork();
      if (pids[1] == 0) {
        while (true) pause();
      }
    }
    if (write(pipe_fds[1], pids, sizeof pids) != sizeof pids) _exit(5);
    while (true) pause();
  }
  close(pipe_fds[1]);
  int pids[2] = {0, 0};
  ASSERT_EQ(read(pipe_fds[0], pids, sizeof pids), static_cast<ssize_t>(sizeof pids));
  close(pipe_fds[0]);
  const int watchdog = pids[0];
  ASSERT_GT(watchdog, 0);
  EXPECT_EQ(fake.Read()["gpu0.locked_max"], "1200");
  EXPECT_EQ(fake.Read()["gpu0.mem_locked"], "1593");

  ASSERT_EQ(kill(trainer, signal_number), 0);
  int status = 0;
  ASSERT_EQ(waitpid(trainer, &status, 0), trainer);
  EXPECT_TRUE(WIFSIGNALED(status));
  ASSERT_EQ(waitpid(watchdog, &status, 0), watchdog);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(fake.Read()["gpu0.locked_max"], "0");
  EXPECT_EQ(fake.Read()["gpu0.mem_locked"], "0");
  EXPECT_NE(fake.Log().find(std::to_string(watchdog) + " nvmlDeviceResetGpuLockedClocks(GPU 0) -> 0"),
            std::string::npos);
  if (pids[1] > 0) {  // the worker outlived the trainer; it is ours now (subreaper)
    EXPECT_EQ(kill(pids[1], SIGKILL), 0);
    EXPECT_EQ(waitpid(pids[1], &status, 0), pids[1]);
  }
}

TEST(WatchdogSetterTest, ClocksAreResetWhenTheTrainingProcessIsKilled) { ExpectResetAfterTrainerDies(SIGKILL); }
TEST(WatchdogSetterTest, ClocksAreResetOnSigterm) { ExpectResetAfterTrainerDies(SIGTERM); }
TEST(WatchdogSetterTest, ClocksAreResetOnSigint) { ExpectResetAfterTrainerDies(SIGINT); }
TEST(WatchdogSetterTest, ClocksAreResetWhenAForkedWorkerOutlivesTheTrainer) {
  ExpectResetAfterTrainerDies(SIGKILL, /*trainer_forks_a_worker=*/true);
}

TEST(WatchdogSetterTest, WatchdogResetsWhenItIsTerminated) {
  ScopedFakeNvml fake;
  auto setter = std::move(StartWatchdogFrequencySetter({.gpu = 0})).value();
  setter->SetFrequency(1200);
  ASSERT_TRUE(setter->WaitUntilApplied().ok());
  ASSERT_EQ(kill(WatchdogPid(*setter), SIGTERM), 0);
  EXPECT_TRUE(setter->Stop().ok());
  EXPECT_EQ(fake.Read()["gpu0.locked_max"], "0");
}

TEST(WatchdogSetterTest, ADeadWatchdogDoesNotHurtTheTrainingProcess) {
  ScopedFakeNvml fake;
  auto setter = std::move(StartWatchdogFrequencySetter({.gpu = 0})).value();
  const int pid = WatchdogPid(*setter);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  // Requests after its death neither block nor raise SIGPIPE.
  for (int i = 0; i < 1000; ++i) setter->SetFrequency(i % 2 ? 1200 : 1300);
  Status wait = setter->WaitUntilApplied();
  ASSERT_FALSE(wait.ok());
  EXPECT_EQ(wait.error().message, "the frequency watchdog (pid " + std::to_string(pid) + ") exited");
  Status stop = setter->Stop();
  ASSERT_FALSE(stop.ok());
  EXPECT_EQ(stop.error().message,
            "the frequency watchdog (pid " + std::to_string(pid) + ") ended without resetting the clocks");
}

}  // namespace
}  // namespace wattcut
