#include "wattcut/runtime/watchdog_child.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "wattcut/gpu/dry_run_backend.h"
#include "wattcut/gpu/simulated_backend.h"

namespace wattcut::watchdog {
namespace {

// A simulated GPU whose memory lock or clock reset can be made to fail (the NVML errors a real
// GPU gives without the right permissions or support).
class FaultyBackend final : public GpuBackend {
 public:
  explicit FaultyBackend(SimulatedBackend& inner) : inner_(inner) {}
  bool fail_memory_lock = false;
  bool fail_reset = false;

  std::string name() const override { return "faulty(" + inner_.name() + ")"; }
  Result<int> DeviceCount() override { return inner_.DeviceCount(); }
  Result<GpuInfo> Info(int gpu) override { return inner_.Info(gpu); }
  Result<std::vector<int>> SupportedMemoryClocksMhz(int gpu) override { return inner_.SupportedMemoryClocksMhz(gpu); }
  Result<std::vector<int>> SupportedGraphicsClocksMhz(int gpu, int memory_clock_mhz) override {
    return inner_.SupportedGraphicsClocksMhz(gpu, memory_clock_mhz);
  }
  Status LockGpuClocks(int gpu, int min_mhz, int max_mhz) override {
    return inner_.LockGpuClocks(gpu, min_mhz, max_mhz);
  }
  Status ResetGpuClocks(int gpu) override {
    if (fail_reset) return Error{"cannot reset GPU " + std::to_string(gpu) + " SM clocks: no permission"};
    return inner_.ResetGpuClocks(gpu);
  }
  Status LockMemoryClocks(int gpu, int min_mhz, int max_mhz) override {
    if (fail_memory_lock) return Error{"cannot lock GPU " + std::to_string(gpu) + " memory clocks: not supported"};
    return inner_.LockMemoryClocks(gpu, min_mhz, max_mhz);
  }
  Status ResetMemoryClocks(int gpu) override { return inner_.ResetMemoryClocks(gpu); }
  Result<PowerLimitsMw> PowerLimits(int gpu) override { return inner_.PowerLimits(gpu); }
  Result<int64_t> PowerLimitMw(int gpu) override { return inner_.PowerLimitMw(gpu); }
  Status SetPowerLimitMw(int gpu, int64_t limit_mw) override { return inner_.SetPowerLimitMw(gpu, limit_mw); }
  Result<int64_t> PowerUsageMw(int gpu) override { return inner_.PowerUsageMw(gpu); }
  Result<int64_t> TotalEnergyMj(int gpu) override { return inner_.TotalEnergyMj(gpu); }
  Result<int> SmClockMhz(int gpu) override { return inner_.SmClockMhz(gpu); }

 private:
  SimulatedBackend& inner_;
};

// A process standing in for the training process: it waits until killed (and dies with the test).
pid_t StartStandInParent() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    while (true) ::pause();
  }
  return pid;
}

int PidFd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

// The child's loop on a thread of the test, which plays the training process: it posts requests
// in the shared page, wakes the child through the wake-up socket and reads its answers. The
// parameter is the child's poll interval (0: it sleeps until woken).
class WatchdogChildTest : public ::testing::TestWithParam<long> {
 protected:
  void SetUp() override {
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, wake_), 0);
    ASSERT_EQ(::pipe2(stop_, O_CLOEXEC), 0);
    parent_exit_fd_ = PidFd(::getppid());
    ASSERT_GE(parent_exit_fd_, 0) << "pidfd_open: " << std::strerror(errno);
  }

  void TearDown() override {
    CloseWakeSocket();  // stops a loop still running
    if (serving_.joinable()) serving_.join();
    for (int fd : {wake_[0], stop_[0], stop_[1], parent_exit_fd_}) ::close(fd);
  }

  // The child for `gpu` over `backend` (default: the simulated GPUs); the fixture owns it, so it
  // outlives its loop's thread.
  WatchdogChild& Child(int gpu, GpuBackend* backend = nullptr) {
    child_ = std::make_unique<WatchdogChild>(backend != nullptr ? *backend : *backend_, gpu, *shared_);
    return *child_;
  }

  // Starts the child's loop as RunWatchdog does, the test's parent standing in for the training
  // process; it resets the clocks when the loop ends.
  void Serve() { Serve(::getppid(), parent_exit_fd_); }
  void Serve(pid_t parent, int parent_exit_fd) {
    const ChildWakeups wakeups{
        .wake_fd = wake_[0], .stop_fd = stop_[0], .parent = parent, .parent_exit_fd = parent_exit_fd};
    serving_ = std::thread([this, wakeups] {
      child_->Serve(wakeups, GetParam());
      reset_ = child_->ResetClocks();
      served_.store(true);
    });
  }

  // What the training process does for a request (see StartWatchdogFrequencySetter).
  void Request(int freq_mhz) {
    if (!PostRequest(*shared_, freq_mhz)) return;
    const char byte = 1;
    ASSERT_EQ(::send(wake_[1], &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL), 1);
  }

  // Waits until the child has handled the latest request, or its loop has ended; the child's answer.
  Status Acknowledgement() {
    const uint64_t target = shared_->request_seq.load();
    while (shared_->handled_seq.load() < target && !served_.load()) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (shared_->handled_seq.load() < target) return Error{"the child stopped before handling the request"};
    if (shared_->last_ok.load() == 0) return Error{ReadLastError(*shared_)};
    return Status::Ok();
  }

  // Waits for the loop to end (and the reset after it).
  void AwaitExit() {
    ASSERT_TRUE(serving_.joinable());
    serving_.join();
  }

  void CloseWakeSocket() {
    if (wake_[1] >= 0) ::close(wake_[1]);
    wake_[1] = -1;
  }

  std::unique_ptr<SimulatedBackend> backend_ =
      std::move(SimulatedBackend::Create("a100-sxm", 2, std::make_shared<ManualClock>())).value();
  FaultyBackend faulty_{*backend_};
  std::vector<std::string> dry_run_log_;
  std::unique_ptr<DryRunBackend> dry_run_;
  std::unique_ptr<Shared> shared_ = std::make_unique<Shared>();
  std::unique_ptr<WatchdogChild> child_;
  int wake_[2] = {-1, -1};
  int stop_[2] = {-1, -1};
  int parent_exit_fd_ = -1;  // the pidfd of the test's parent
  std::thread serving_;
  std::atomic<bool> served_{false};
  Status reset_ = Error{"not reset yet"};
};

INSTANTIATE_TEST_SUITE_P(PollingAndWoken, WatchdogChildTest, ::testing::Values(500L, 0L),
                         [](const ::testing::TestParamInfo<long>& param) {
                           return param.param > 0 ? std::string("Polling") : std::string("Woken");
                         });

TEST_P(WatchdogChildTest, StartLocksTheMemoryClockToItsMaximum) {
  ASSERT_TRUE(Child(1).Start(/*require_memory_lock=*/true).ok());
  EXPECT_TRUE(backend_->memory_clocks_locked(1));
  EXPECT_FALSE(backend_->memory_clocks_locked(0));
  EXPECT_EQ(ReadLastError(*shared_), "");
}

TEST_P(WatchdogChildTest, StartRejectsAMissingGpu) {
  Status started = Child(2).Start(false);
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.error().message, "GPU 2 does not exist (2 GPUs)");
}

TEST_P(WatchdogChildTest, AMemoryClockThatCannotBeLockedIsAWarningUnlessRequired) {
  faulty_.fail_memory_lock = true;
  Status refused = Child(0, &faulty_).Start(/*require_memory_lock=*/true);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "cannot lock GPU 0 memory clocks: not supported");
  EXPECT_EQ(ReadLastError(*shared_), "");
  ASSERT_TRUE(Child(0, &faulty_).Start(/*require_memory_lock=*/false).ok());
  EXPECT_EQ(ReadLastError(*shared_), "memory clock not locked: cannot lock GPU 0 memory clocks: not supported");
}

TEST_P(WatchdogChildTest, ARequestIsAppliedAndAcknowledged) {
  ASSERT_TRUE(Child(1).Start(false).ok());
  Serve();
  Request(1200);
  ASSERT_TRUE(Acknowledgement().ok());
  EXPECT_EQ(*backend_->SmClockMhz(1), 1200);
  EXPECT_EQ(*backend_->SmClockMhz(0), 1410);
  EXPECT_EQ(shared_->handled_seq.load(), shared_->request_seq.load());
  EXPECT_EQ(shared_->applied_mhz.load(), 1200);
  EXPECT_EQ(shared_->last_ok.load(), 1);
  EXPECT_EQ(shared_->requested.load(), 1u);
  EXPECT_EQ(shared_->applied.load(), 1u);
  Request(1005);
  ASSERT_TRUE(Acknowledgement().ok());
  EXPECT_EQ(*backend_->SmClockMhz(1), 1005);
  EXPECT_EQ(shared_->applied_mhz.load(), 1005);
  EXPECT_EQ(shared_->applied.load(), 2u);
  EXPECT_EQ(shared_->failed.load(), 0u);
  EXPECT_FALSE(served_.load());
}

TEST_P(WatchdogChildTest, TheLatestRequestWinsAndTheAppliedOneIsSkipped) {
  ASSERT_TRUE(Child(0).Start(false).ok());
  Serve();
  for (int f = 1410; f >= 900; f -= 15) Request(f);
  Request(1005);
  ASSERT_TRUE(Acknowledgement().ok());
  EXPECT_EQ(*backend_->SmClockMhz(0), 1005);
  EXPECT_EQ(shared_->applied_mhz.load(), 1005);
  // The same frequency again (the training process does not send a repeat; the child must not
  // lock twice either).
  const uint64_t applied = shared_->applied.load();
  const uint64_t skipped = shared_->skipped.load();
  Request(1005);
  ASSERT_TRUE(Acknowledgement().ok());
  EXPECT_EQ(shared_->applied.load(), applied);
  EXPECT_EQ(shared_->skipped.load(), skipped + 1);
  EXPECT_EQ(shared_->last_ok.load(), 1);
}

TEST_P(WatchdogChildTest, AnUnsupportedFrequencyGetsAnErrorReplyAndTheChildKeepsServing) {
  ASSERT_TRUE(Child(0).Start(false).ok());
  Serve();
  Request(2000);
  Status refused = Acknowledgement();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "cannot lock GPU 0 SM clocks to 2000-2000 MHz: supported 210-1410 MHz");
  EXPECT_EQ(shared_->last_ok.load(), 0);
  EXPECT_EQ(shared_->failed.load(), 1u);
  EXPECT_EQ(shared_->applied_mhz.load(), 0);
  EXPECT_FALSE(backend_->gpu_clocks_locked(0));
  Request(1300);
  ASSERT_TRUE(Acknowledgement().ok());
  EXPECT_EQ(*backend_->SmClockMhz(0), 1300);
  EXPECT_EQ(shared_->last_ok.load(), 1);
  EXPECT_EQ(shared_->applied_mhz.load(), 1300);
  EXPECT_EQ(shared_->failed.load(), 1u);
}

TEST_P(WatchdogChildTest, ANonPositiveFrequencyIsSkippedAndTheChildKeepsServing) {
  ASSERT_TRUE(Child(0).Start(false).ok());
  Serve();
  Request(-1200);
  ASSERT_TRUE(Acknowledgement().ok());
  EXPECT_EQ(shared_->skipped.load(), 1u);
  EXPECT_FALSE(backend_->gpu_clocks_locked(0));
  Request(1100);
  ASSERT_TRUE(Acknowledgement().ok());
  EXPECT_EQ(*backend_->SmClockMhz(0), 1100);
  EXPECT_EQ(shared_->applied.load(), 1u);
}

TEST_P(WatchdogChildTest, GarbageOnTheWakeUpSocketOnlyWakesTheChild) {
  ASSERT_TRUE(Child(0).Start(false).ok());
  Serve();
  // More bytes than the child reads at once, and no request behind them.
  const std::string garbage(1000, '\x7f');
  ASSERT_EQ(::send(wake_[1], garbage.data(), garbage.size(), MSG_NOSIGNAL), static_cast<ssize_t>(garbage.size()));
  Request(1200);
  ASSERT_TRUE(Acknowledgement().ok());
  EXPECT_EQ(*backend_->SmClockMhz(0), 1200);
  EXPECT_EQ(shared_->requested.load(), 1u);
  EXPECT_EQ(shared_->skipped.load(), 0u);
  EXPECT_FALSE(served_.load());
}

TEST_P(WatchdogChildTest, ClocksAreResetWhenTheParentExits) {
  const pid_t parent = StartStandInParent();
  ASSERT_GT(parent, 0);
  const int parent_exit_fd = PidFd(parent);
  ASSERT_GE(parent_exit_fd, 0) << "pidfd_open: " << std::strerror(errno);
  ASSERT_TRUE(Child(0).Start(false).ok());
  Serve(::getppid(), parent_exit_fd);
  Request(1200);
  ASSERT_TRUE(Acknowledgement().ok());
  ASSERT_TRUE(backend_->gpu_clocks_locked(0));
  // The wake-up socket stays open (as when a forked worker of the training process holds a copy
  // of it): only the parent's exit tells the child.
  ASSERT_EQ(::kill(parent, SIGKILL), 0);
  AwaitExit();
  int status = 0;
  EXPECT_EQ(::waitpid(parent, &status, 0), parent);
  ::close(parent_exit_fd);
  EXPECT_TRUE(reset_.ok()) << reset_.error().message;
  EXPECT_FALSE(backend_->gpu_clocks_locked(0));
  EXPECT_FALSE(backend_->memory_clocks_locked(0));
  EXPECT_EQ(shared_->reset_ok.load(), 1);
  EXPECT_EQ(shared_->applied_mhz.load(), 0);
}

TEST_P(WatchdogChildTest, ClocksAreResetWhenTheWakeUpSocketCloses) {
  ASSERT_TRUE(Child(0).Start(false).ok());
  Serve();
  Request(1200);
  ASSERT_TRUE(Acknowledgement().ok());
  CloseWakeSocket();  // the training process stopped the watchdog, or died
  AwaitExit();
  EXPECT_TRUE(reset_.ok());
  EXPECT_FALSE(backend_->gpu_clocks_locked(0));
  EXPECT_FALSE(backend_->memory_clocks_locked(0));
  EXPECT_EQ(shared_->reset_ok.load(), 1);
}

TEST_P(WatchdogChildTest, ClocksAreResetWhenTheStopFdIsReadable) {
  ASSERT_TRUE(Child(0).Start(false).ok());
  Serve();
  Request(1200);
  ASSERT_TRUE(Acknowledgement().ok());
  const char byte = 1;  // what SIGTERM or SIGHUP make the signalfd
  ASSERT_EQ(::write(stop_[1], &byte, 1), 1);
  AwaitExit();
  EXPECT_TRUE(reset_.ok());
  EXPECT_FALSE(backend_->gpu_clocks_locked(0));
  EXPECT_EQ(shared_->reset_ok.load(), 1);
}

TEST_P(WatchdogChildTest, WithoutAPidfdOfItsParentTheChildServesAndStopsAllTheSame) {
  ASSERT_TRUE(Child(0).Start(false).ok());
  Serve(::getppid(), /*parent_exit_fd=*/-1);
  Request(1200);
  ASSERT_TRUE(Acknowledgement().ok());
  EXPECT_EQ(*backend_->SmClockMhz(0), 1200);
  Request(1000);
  ASSERT_TRUE(Acknowledgement().ok());
  EXPECT_EQ(*backend_->SmClockMhz(0), 1000);
  CloseWakeSocket();
  AwaitExit();
  EXPECT_TRUE(reset_.ok());
  EXPECT_FALSE(backend_->gpu_clocks_locked(0));
}

TEST_P(WatchdogChildTest, AChildWhoseParentIsNoLongerItsParentStops) {
  // getppid() differs from the parent it was started by: the parent died and the child was
  // re-parented (the check that remains on kernels without pidfds).
  ASSERT_TRUE(Child(0).Start(false).ok());
  ASSERT_TRUE(backend_->LockGpuClocks(0, 1200, 1200).ok());
  Serve(/*parent=*/::getpid(), /*parent_exit_fd=*/-1);
  AwaitExit();
  EXPECT_TRUE(reset_.ok());
  EXPECT_FALSE(backend_->gpu_clocks_locked(0));
  EXPECT_EQ(shared_->requested.load(), 0u);
}

TEST_P(WatchdogChildTest, AFailedResetIsReportedInTheSharedPage) {
  faulty_.fail_reset = true;
  ASSERT_TRUE(Child(0, &faulty_).Start(false).ok());
  Serve();
  Request(1200);
  ASSERT_TRUE(Acknowledgement().ok());
  CloseWakeSocket();
  AwaitExit();
  ASSERT_FALSE(reset_.ok());
  EXPECT_EQ(reset_.error().message, "cannot reset GPU 0 SM clocks: no permission");
  EXPECT_EQ(shared_->reset_ok.load(), -1);
  EXPECT_EQ(std::string(shared_->reset_error), "cannot reset GPU 0 SM clocks: no permission");
  EXPECT_EQ(shared_->applied_mhz.load(), 0);
  EXPECT_FALSE(backend_->memory_clocks_locked(0));  // the memory clock is reset all the same
}

TEST_P(WatchdogChildTest, ADryRunLogsWhatItWouldDoAndChangesNothing) {
  auto simulated = std::move(SimulatedBackend::Create("a100-sxm", 1, std::make_shared<ManualClock>())).value();
  SimulatedBackend& gpu = *simulated;
  // The log is read only while the loop does not run (before Serve, after AwaitExit).
  dry_run_ = std::make_unique<DryRunBackend>(std::move(simulated),
                                             [this](const std::string& line) { dry_run_log_.push_back(line); });
  ASSERT_TRUE(Child(0, dry_run_.get()).Start(false).ok());
  ASSERT_EQ(dry_run_log_.size(), 1u);
  EXPECT_EQ(dry_run_log_[0].rfind("dry run: would lock GPU 0 memory clocks to ", 0), 0u) << dry_run_log_[0];
  Serve();
  Request(1200);
  ASSERT_TRUE(Acknowledgement().ok());
  EXPECT_EQ(shared_->applied_mhz.load(), 1200);
  CloseWakeSocket();
  AwaitExit();
  EXPECT_TRUE(reset_.ok());
  EXPECT_EQ(dry_run_log_, (std::vector<std::string>{
                              dry_run_log_[0], "dry run: would lock GPU 0 SM clocks to 1200-1200 MHz",
                              "dry run: would reset GPU 0 SM clocks", "dry run: would reset GPU 0 memory clocks"}));
  EXPECT_FALSE(gpu.gpu_clocks_locked(0));
  EXPECT_FALSE(gpu.memory_clocks_locked(0));
}

// ---- The helper process's main (RunWatchdog) in a forked child ----

struct HelperRun {
  int exit_status = -1;
  std::string ready_reply;
  std::string stderr_text;
};

std::string ReadToEof(int fd) {
  std::string text;
  char buffer[512];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  return text;
}

// Runs RunWatchdog(args) in a forked child with `shared_fd` as its fd 3 and pipes as its ready
// fd 5 and its stderr; its exit status, ready reply and stderr.
HelperRun RunHelper(std::vector<std::string> args, int shared_fd) {
  HelperRun run;
  int ready[2], err[2];
  if (::pipe(ready) != 0 || ::pipe(err) != 0) return run;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // Above the fixed numbers first, so that no dup2 overwrites a descriptor still to be moved.
    const int fds[3] = {::fcntl(shared_fd, F_DUPFD, 10), ::fcntl(ready[1], F_DUPFD, 10), ::fcntl(err[1], F_DUPFD, 10)};
    if (::dup2(fds[0], kSharedFd) < 0 || ::dup2(fds[1], kReadyFd) < 0 || ::dup2(fds[2], STDERR_FILENO) < 0) {
      ::_exit(127);
    }
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    ::_exit(RunWatchdog(static_cast<int>(args.size()), argv.data()));
  }
  ::close(ready[1]);
  ::close(err[1]);
  run.ready_reply = ReadToEof(ready[0]);
  run.stderr_text = ReadToEof(err[0]);
  ::close(ready[0]);
  ::close(err[0]);
  int status = 0;
  if (pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status)) run.exit_status = WEXITSTATUS(status);
  return run;
}

TEST(RunWatchdogTest, AnUnknownArgumentIsRefused) {
  int unused[2];
  ASSERT_EQ(::pipe(unused), 0);
  const HelperRun run = RunHelper({"wattcut-freq-setter", "--gpu", "0", "--frobnicate"}, unused[0]);
  ::close(unused[0]);
  ::close(unused[1]);
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.stderr_text,
            "wattcut-freq-setter: unknown argument '--frobnicate' (this program is started by wattcut's frequency "
            "setter)\n");
  EXPECT_EQ(run.ready_reply, "");
}

TEST(RunWatchdogTest, NotStartedByWattcutItSaysSoOnTheReadyPipe) {
  // fd 3 is a pipe, not the shared page's memfd: it cannot be mapped.
  int not_a_page[2];
  ASSERT_EQ(::pipe(not_a_page), 0);
  const HelperRun run = RunHelper({"wattcut-freq-setter", "--gpu", "0", "--dry-run"}, not_a_page[0]);
  ::close(not_a_page[0]);
  ::close(not_a_page[1]);
  EXPECT_EQ(run.exit_status, 2);
  const std::optional<Status> started = ParseReadyReply(run.ready_reply);
  ASSERT_TRUE(started.has_value()) << run.ready_reply;
  ASSERT_FALSE(started->ok());
  EXPECT_EQ(started->error().message, "wattcut-freq-setter: cannot map the shared page (not started by wattcut?)");
}

}  // namespace
}  // namespace wattcut::watchdog
