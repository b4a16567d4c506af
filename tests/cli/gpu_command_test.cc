// `wattcut gpu lock` checks every argument against every selected GPU before it changes
// anything, and undoes what it applied when a later step still fails: on the simulated
// backend and on the fake NVML (whose state file shows what the GPUs were left with).
// `wattcut gpu check` prints each check's result and a verdict with its exit status, and
// `wattcut gpu profile` writes the profile CSV and each stage's progress. Through a real
// `wattcut agent` process (`wattcut gpu --agent SOCKET ...`) every subcommand says what it says on
// the local backend; a lock there lasts while `lock --hold` / `--for` runs, and is refused without.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>

#include "tests/cli/command_runner.h"
#include "wattcut/base/child_process_testing.h"
#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"

namespace wattcut {
namespace {

using fake_nvml::ScopedFakeNvml;
using testing::RunWattcut;

// Every wattcut this test starts loads the fake as libnvidia-ml.so.1.
const bool kLibraryPathSet = (setenv("LD_LIBRARY_PATH", WATTCUT_FAKE_NVML_DIR, 1), true);

std::string Value(const fake_nvml::State& state, const std::string& key) {
  auto it = state.find(key);
  return it == state.end() ? "" : it->second;
}

TEST(GpuLockCommand, SimulatedBackendChecksThePowerLimitBeforeLockingTheClock) {
  auto result = RunWattcut("gpu lock --backend simulated --sm 1200 --power-limit 10");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");  // nothing was locked, not even for a moment
  EXPECT_EQ(result.err,
            "wattcut gpu lock: error: GPU 0: power limit 10.0 W is outside the allowed 250.0-500.0 W "
            "(nothing was changed)\n");
  auto clock = RunWattcut("gpu lock --backend simulated --gpus 2 --sm 5000 --power-limit 1e300");
  EXPECT_EQ(clock.exit_code, 1);
  EXPECT_EQ(clock.out, "");
  EXPECT_NE(clock.err.find("--power-limit: expected a positive number of watts below 1000000, got 1e+300"),
            std::string::npos)
      << clock.err;
  auto range = RunWattcut("gpu lock --backend simulated --gpus 2 --sm 5000");
  EXPECT_EQ(range.exit_code, 1);
  EXPECT_EQ(range.err,
            "wattcut gpu lock: error: GPU 0: SM clocks 5000-5000 MHz are outside the supported 210-1410 MHz; "
            "GPU 1: SM clocks 5000-5000 MHz are outside the supported 210-1410 MHz (nothing was changed)\n");
  auto good = RunWattcut("gpu lock --backend simulated --sm 1200 --power-limit 300");
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_NE(good.out.find("GPU 0: set the power limit to 300.0 W"), std::string::npos) << good.out;
}

TEST(GpuLockCommand, FakeNvmlIsNeverTouchedByAnInvalidLock) {
  ASSERT_TRUE(kLibraryPathSet);
  ScopedFakeNvml nvml;
  auto result = RunWattcut("gpu lock --sm 1200 --power-limit 10");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("GPU 0: power limit 10.0 W is outside the allowed 100.0-400.0 W; "
                            "GPU 1: power limit 10.0 W is outside the allowed 100.0-400.0 W (nothing was changed)"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(nvml.Log().find("nvmlDeviceSet"), std::string::npos) << nvml.Log();
  EXPECT_EQ(Value(nvml.Read(), "gpu0.locked_max"), "");
}

TEST(GpuLockCommand, AStepThatFailsAfterOthersWereAppliedRollsThemBack) {
  ASSERT_TRUE(kLibraryPathSet);
  // GPU 0 had its limit lowered to 350 W before; GPU 1 refuses clock locks.
  ScopedFakeNvml nvml(
      fake_nvml::State{{"gpu0.power_limit_mw", "350000"}, {"gpu1.fail.nvmlDeviceSetGpuLockedClocks", "4"}});
  auto result = RunWattcut("gpu lock --sm 1200 --power-limit 300");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.out.find("GPU 0: locked SM clocks to 1200-1200 MHz"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find("nvmlDeviceSetGpuLockedClocks(GPU 1, 1200, 1200)"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("rolled back: GPU 0 power limit restored to 350.0 W, GPU 0 SM clocks reset"),
            std::string::npos)
      << result.err;
  const fake_nvml::State state = nvml.Read();
  EXPECT_EQ(Value(state, "gpu0.locked_max"), "0");
  EXPECT_EQ(Value(state, "gpu0.power_limit_mw"), "350000");
  EXPECT_EQ(Value(state, "gpu1.locked_max"), "");

  // The memory lock failing on GPU 0 undoes GPU 0's SM lock.
  ScopedFakeNvml memory(fake_nvml::State{{"gpu0.fail.nvmlDeviceSetMemoryLockedClocks", "3"}});
  auto partial = RunWattcut("gpu lock --gpu 0 --sm 1200 --memory-max");
  EXPECT_EQ(partial.exit_code, 1);
  EXPECT_NE(partial.err.find("rolled back: GPU 0 SM clocks reset"), std::string::npos) << partial.err;
  EXPECT_EQ(Value(memory.Read(), "gpu0.locked_max"), "0");
}

TEST(GpuCheckCommand, PrintsEveryResultAndTheVerdictWithItsExitStatus) {
  auto pass = RunWattcut("gpu check --backend simulated --duration 0");
  EXPECT_EQ(pass.exit_code, 0) << pass.err;
  EXPECT_EQ(pass.out,
            "[PASS] backend simulated sees 1 GPU(s)\n"
            "[PASS] GPU 0: Simulated a100-sxm (wattcut GPU model) GPU-SIM-a100-sxm-0\n"
            "[PASS] GPU 0: max memory clock 1593 MHz; SM clocks 1410..210 MHz (81 clocks)\n"
            "[DRY] GPU 0: dry run: would lock GPU 0 SM clocks to 210-210 MHz\n"
            "[DRY] GPU 0: dry run: would lock GPU 0 memory clocks to 1593-1593 MHz\n"
            "[DRY] GPU 0: dry run: would reset GPU 0 SM clocks\n"
            "[DRY] GPU 0: dry run: would reset GPU 0 memory clocks\n"
            "[DRY] GPU 0: dry run: would set GPU 0 power limit to 500000 mW\n"
            "VERDICT: PASS: the simulated backend discovers, reads clocks, power and energy; setters were exercised "
            "in dry-run only (no GPU setting was changed)\n");
  EXPECT_EQ(pass.err, "");

  auto missing = RunWattcut("gpu check --backend simulated --gpu 5");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.out, "[FAIL] GPU 5 does not exist (1 GPU)\nVERDICT: FAIL\n");

  auto no_gpu = RunWattcut("gpu check --nvml-library libnvidia-ml-absent.so.1");
  EXPECT_EQ(no_gpu.exit_code, 2);
  EXPECT_EQ(no_gpu.out.rfind("[FAIL] open the nvml backend: cannot load NVML (libnvidia-ml-absent.so.1): ", 0), 0u)
      << no_gpu.out;
  EXPECT_NE(no_gpu.out.find("\nVERDICT: NO GPU: this machine has no usable NVIDIA GPU or driver; nothing to check\n"),
            std::string::npos)
      << no_gpu.out;

  auto negative = RunWattcut("gpu check --backend simulated --duration -1");
  EXPECT_EQ(negative.exit_code, 1);
  EXPECT_EQ(negative.out, "");
  EXPECT_EQ(negative.err, "wattcut gpu check: error: --duration must be a number of seconds >= 0\n");
}

TEST(GpuProfileCommand, WritesOneCsvForEveryStageAndShowsEachStagesProgress) {
  testing::TempDir dir;
  const std::string csv_path = dir.path() + "/profile.csv";
  auto written = RunWattcut("gpu profile --stages 2 --step 300 --out " + csv_path);
  EXPECT_EQ(written.exit_code, 0) << written.err;
  EXPECT_EQ(written.out, "");
  EXPECT_EQ(written.err,
            "stage 0: 2 frequencies profiled, 5.0 s of simulated GPU time\n"
            "stage 1: 2 frequencies profiled, 5.4 s of simulated GPU time\n"
            "wrote " +
                csv_path + "\n");
  const std::string csv = testing::ReadFile(csv_path);
  EXPECT_EQ(csv.substr(0, csv.find('\n') + 1), "stage,instruction,frequency,time,energy,samples,time_std,energy_std\n");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 9);  // 2 stages x 1410, 1110 MHz x forward, backward
  EXPECT_NE(csv.find("\n1,backward,1110,"), std::string::npos) << csv;

  auto to_stdout = RunWattcut("gpu profile --stages 1 --step 300");
  EXPECT_EQ(to_stdout.exit_code, 0) << to_stdout.err;
  EXPECT_EQ(to_stdout.out.rfind("stage,instruction,frequency,", 0), 0u) << to_stdout.out;
  EXPECT_EQ(to_stdout.err, "stage 0: 2 frequencies profiled, 5.4 s of simulated GPU time\n");

  auto nvml = RunWattcut("gpu profile --backend nvml");
  EXPECT_EQ(nvml.exit_code, 1);
  EXPECT_EQ(nvml.err,
            "wattcut gpu profile: error: only --backend simulated: on real GPUs the profiler runs inside the training "
            "job (wattcut::OnlineProfiler, see docs/gpu.md)\n");
  auto no_stage = RunWattcut("gpu profile --stages 0");
  EXPECT_EQ(no_stage.exit_code, 1);
  EXPECT_EQ(no_stage.err, "wattcut gpu profile: error: --stages and --microbatches must be >= 1\n");
}

// A `wattcut agent` process on two simulated GPUs, serving a socket in a fresh folder; SIGTERMed
// at the end.
class AgentProcess {
 public:
  explicit AgentProcess(const std::string& socket_mode = "0600") : socket_(dir_.path() + "/agent.sock") {
    child_ = testing::StartChild({WATTCUT_BINARY, "agent", "--socket", socket_, "--socket-mode", socket_mode,
                                  "--backend", "simulated", "--gpus", "2"},
                                 "wattcut agent: serving");
    EXPECT_GT(child_.pid, 0) << child_.output;
  }
  ~AgentProcess() {
    if (child_.pid > 0) testing::StopChild(child_.pid, SIGTERM);
  }
  const std::string& socket() const { return socket_; }
  const std::string& folder() const { return dir_.path(); }
  bool running() const { return child_.pid > 0; }

 private:
  testing::TempDir dir_;
  std::string socket_;
  testing::ChildProcess child_;
};

// `text` without the values that change from one reading to the next (power, energy, time).
std::string WithoutMeasurements(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    for (const char* measured : {"  power now: ", "  energy counter: "}) {
      if (line.rfind(measured, 0) == 0) line = measured;
    }
    out += line + "\n";
  }
  return out;
}

std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

TEST(GpuCommandThroughAnAgent, ListCheckAndWatchSayWhatTheLocalBackendSays) {
  AgentProcess agent;
  ASSERT_TRUE(agent.running());
  const std::string via = "gpu --agent " + agent.socket() + " ";
  const std::string agent_name = "agent(unix:" + agent.socket() + ")";

  auto local = RunWattcut("gpu list --backend simulated --gpus 2");
  auto remote = RunWattcut(via + "list");
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(remote.out.substr(0, remote.out.find('\n')), "backend: " + agent_name);
  EXPECT_EQ(WithoutMeasurements(Replaced(remote.out, agent_name, "simulated")), WithoutMeasurements(local.out));
  auto one = RunWattcut("gpu list --agent " + agent.socket() + " --gpu 1");  // --agent after the subcommand too
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("GPU 1: Simulated a100-sxm"), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("GPU 0:"), std::string::npos) << one.out;

  auto local_check = RunWattcut("gpu check --backend simulated --gpus 2 --duration 0");
  auto remote_check = RunWattcut(via + "check --duration 0");
  EXPECT_EQ(remote_check.exit_code, 0) << remote_check.err;
  EXPECT_EQ(Replaced(remote_check.out, agent_name, "simulated"), local_check.out);
  EXPECT_NE(remote_check.out.find("VERDICT: PASS"), std::string::npos) << remote_check.out;

  auto watch = RunWattcut(via + "watch --count 2 --interval 0.1 --gpu 0");
  ASSERT_EQ(watch.exit_code, 0) << watch.err;
  std::istringstream lines(watch.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "# time_s gpu power_w sm_mhz energy_j");
  for (int sample = 0; sample < 2; ++sample) {
    ASSERT_TRUE(std::getline(lines, line)) << watch.out;
    std::istringstream fields(line);
    double time_s = 0, power_w = 0, energy_j = 0;
    int gpu = -1, sm_mhz = 0;
    ASSERT_TRUE(fields >> time_s >> gpu >> power_w >> sm_mhz >> energy_j) << line;
    EXPECT_EQ(gpu, 0);
    EXPECT_EQ(sm_mhz, 1410);
    EXPECT_GT(power_w, 0);
  }
  EXPECT_FALSE(std::getline(lines, line)) << watch.out;

  // $WATTCUT_AGENT_SOCKET stands for --agent, unless --backend is given.
  ::setenv("WATTCUT_AGENT_SOCKET", agent.socket().c_str(), 1);
  auto from_environment = RunWattcut("gpu list");
  auto explicit_backend = RunWattcut("gpu list --backend simulated");
  ::unsetenv("WATTCUT_AGENT_SOCKET");
  EXPECT_EQ(from_environment.out.substr(0, from_environment.out.find('\n')), "backend: " + agent_name);
  EXPECT_EQ(explicit_backend.out.substr(0, explicit_backend.out.find('\n')), "backend: simulated");
}

TEST(GpuCommandThroughAnAgent, ALockNeedsHoldOrForThereAndEndsAsOnTheLocalBackend) {
  AgentProcess agent;
  ASSERT_TRUE(agent.running());
  const std::string via = "gpu --agent " + agent.socket() + " ";
  auto refused = RunWattcut(via + "lock --gpu 0 --sm 1200");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.out, "");
  EXPECT_EQ(refused.err,
            "wattcut gpu lock: error: through an agent a lock lasts only as long as this command: the lock belongs to "
            "this process's lease, and the agent ends the lease and resets the clocks when the process exits. Add "
            "--hold (keep the lock until Ctrl-C or SIGTERM) or --for SECONDS\n");

  const std::string lock = "lock --gpu 0 --sm 1200 --memory-max --power-limit 300 --for 0.2";
  auto local = RunWattcut("gpu " + lock + " --backend simulated");
  auto remote = RunWattcut(via + lock);
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(remote.out, local.out);
  EXPECT_EQ(remote.out,
            "GPU 0: locked SM clocks to 1200-1200 MHz (SM clock was 1410 MHz, reads 1200 MHz now)\n"
            "GPU 0: locked the memory clock to its maximum, 1593 MHz\n"
            "GPU 0: set the power limit to 300.0 W\n"
            "holding the lock for 0.2 s (or until SIGINT or SIGTERM)\n"
            "time is up: rolled back: GPU 0 power limit restored to 500.0 W, GPU 0 memory clocks reset, GPU 0 SM "
            "clocks reset\n");
  auto after = RunWattcut(via + "list --gpu 0");
  EXPECT_NE(after.out.find("SM clock now: 1410 MHz"), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("power limit: 500 W now"), std::string::npos) << after.out;

  // The checks of every argument against every GPU are the same through the agent.
  auto local_range = RunWattcut("gpu lock --backend simulated --gpus 2 --sm 5000 --for 1");
  auto remote_range = RunWattcut(via + "lock --sm 5000 --for 1");
  EXPECT_EQ(remote_range.exit_code, 1);
  EXPECT_EQ(remote_range.err, local_range.err);
  EXPECT_NE(remote_range.err.find("GPU 1: SM clocks 5000-5000 MHz are outside the supported 210-1410 MHz"),
            std::string::npos)
      << remote_range.err;
  auto both = RunWattcut(via + "lock --sm 1200 --hold --for 1");
  EXPECT_EQ(both.err, "wattcut gpu lock: error: give --hold (until a signal) or --for SECONDS, not both\n");
  auto dry = RunWattcut(via + "lock --gpu 0 --sm 1200 --dry-run");  // a dry run changes nothing: no hold needed
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("GPU 0: would lock SM clocks to 1200-1200 MHz"), std::string::npos) << dry.out;
  auto reset = RunWattcut(via + "reset --power-limit");
  EXPECT_EQ(reset.exit_code, 0) << reset.err;
  EXPECT_NE(reset.out.find("GPU 1: reset the power limit to its default, 500.0 W"), std::string::npos) << reset.out;
}

TEST(GpuCommandThroughAnAgent, AHeldLockHoldsUntilItsSignalAndOthersAreToldWhoHoldsIt) {
  AgentProcess agent;
  ASSERT_TRUE(agent.running());
  const std::string via = "gpu --agent " + agent.socket() + " ";
  testing::ChildProcess holder = testing::StartChild(
      {WATTCUT_BINARY, "gpu", "--agent", agent.socket(), "lock", "--gpu", "0", "--sm", "1200", "--hold"},
      "holding the lock");
  ASSERT_GT(holder.pid, 0) << holder.output;
  EXPECT_EQ(holder.output, "GPU 0: locked SM clocks to 1200-1200 MHz (SM clock was 1410 MHz, reads 1200 MHz now)\n");
  EXPECT_EQ(holder.ready_line, "holding the lock until SIGINT or SIGTERM (Ctrl-C)");
  auto held = RunWattcut(via + "list --gpu 0");
  EXPECT_NE(held.out.find("SM clock now: 1200 MHz"), std::string::npos) << held.out;
  const std::string holder_text =
      "GPU 0 is leased by pid " + std::to_string(holder.pid) + " (uid " + std::to_string(::getuid()) + ")";
  auto second = RunWattcut(via + "lock --gpu 0 --sm 1110 --for 1");
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_EQ(second.err, "wattcut gpu lock: error: " + holder_text + "\n");
  auto reset = RunWattcut(via + "reset --gpu 0");
  EXPECT_EQ(reset.exit_code, 1);
  EXPECT_EQ(reset.err, "wattcut gpu reset: error: " + holder_text + "\n");
  EXPECT_EQ(RunWattcut(via + "reset --gpu 1").exit_code, 0);  // the other GPU is free
  EXPECT_EQ(testing::StopChild(holder.pid, SIGTERM), 0);
  auto released = RunWattcut(via + "list --gpu 0");
  EXPECT_NE(released.out.find("SM clock now: 1410 MHz"), std::string::npos) << released.out;

  // A holder killed outright: the agent ends its lease and resets the GPU by itself.
  holder = testing::StartChild(
      {WATTCUT_BINARY, "gpu", "--agent", agent.socket(), "lock", "--gpu", "1", "--sm", "1110", "--hold"},
      "holding the lock");
  ASSERT_GT(holder.pid, 0) << holder.output;
  EXPECT_EQ(testing::StopChild(holder.pid, SIGKILL), 128 + SIGKILL);
  bool reset_by_agent = false;
  for (int i = 0; i < 100 && !reset_by_agent; ++i) {  // checked every 50 ms, at most 5 s
    reset_by_agent = RunWattcut(via + "list --gpu 1").out.find("SM clock now: 1410 MHz") != std::string::npos;
    if (!reset_by_agent) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(reset_by_agent);
}

// Runs `arguments` of wattcut as uid/gid 65534 (nobody), through setpriv.
testing::CommandResult RunWattcutAsNobody(const std::string& arguments) {
  testing::TempDir dir;
  const std::string out = dir.path() + "/out", err = dir.path() + "/err";
  const std::string command = "setpriv --reuid 65534 --regid 65534 --clear-groups " + std::string(WATTCUT_BINARY) +
                              " " + arguments + " >" + out + " 2>" + err + " </dev/null";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, testing::ReadFile(out), testing::ReadFile(err)};
}

TEST(GpuCommandThroughAnAgent, AnOrdinaryUserLocksThroughAnAgentWhoseSocketLetsItIn) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the agent's client as uid 65534";
  AgentProcess open_agent("0666");
  AgentProcess owner_only("0600");
  ASSERT_TRUE(open_agent.running() && owner_only.running());
  for (const AgentProcess* agent : {&open_agent, &owner_only}) {
    ASSERT_EQ(::chmod(agent->folder().c_str(), 0755), 0);  // only the socket's mode decides
  }
  auto locked = RunWattcutAsNobody("gpu --agent " + open_agent.socket() + " lock --gpu 0 --sm 1200 --for 0.1");
  EXPECT_EQ(locked.exit_code, 0) << locked.err;
  EXPECT_NE(locked.out.find("GPU 0: locked SM clocks to 1200-1200 MHz (SM clock was 1410 MHz, reads 1200 MHz now)"),
            std::string::npos)
      << locked.out;
  auto refused = RunWattcutAsNobody("gpu --agent " + owner_only.socket() + " list");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.err, "wattcut gpu list: error: cannot reach unix:" + owner_only.socket() +
                             ": Permission denied (the socket's mode or group does not let this user connect)\n");
}

TEST(GpuCommandThroughAnAgent, ErrorsSayWhatIsWrongWithTheAgentOrTheFlags) {
  testing::TempDir dir;
  const std::string absent = dir.path() + "/agent.sock";
  auto unreachable = RunWattcut("gpu --agent " + absent + " list");
  EXPECT_EQ(unreachable.exit_code, 1);
  EXPECT_EQ(unreachable.err, "wattcut gpu list: error: cannot reach unix:" + absent +
                                 ": no socket file there (is the agent running?)\n");
  auto both = RunWattcut("gpu --agent " + absent + " list --backend simulated");
  EXPECT_EQ(both.err, "wattcut gpu list: error: give --agent or --backend, not both\n");
  auto token = RunWattcut("gpu --agent-token-file " + dir.path() + "/t reset --backend simulated");
  EXPECT_EQ(token.err, "wattcut gpu reset: error: --agent-token-file needs --agent\n");
  auto profile = RunWattcut("gpu --agent " + absent + " profile --stages 1");
  EXPECT_EQ(profile.err, "wattcut gpu profile: error: --agent does not apply: the profiler runs on simulated GPUs\n");
  auto no_check = RunWattcut("gpu --agent " + absent + " check --duration 0");
  EXPECT_EQ(no_check.exit_code, 1);
  EXPECT_NE(no_check.out.find("[FAIL] open the agent backend: cannot reach unix:" + absent), std::string::npos)
      << no_check.out;
}

}  // namespace
}  // namespace wattcut
