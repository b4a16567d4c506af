// `wattcut frontier` and `wattcut emulate` on inputs beyond the planning limits
// (src/wattcut/plan/planning_limits.h) or that quantise badly: every one ends with exit
// code 1 and a message that names the field and the bound, never with a signal, and
// within a 2 GiB address space.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <fstream>
#include <sstream>

#include "tests/cli/command_runner.h"
#include "wattcut/base/shared_data_testing.h"

namespace wattcut {
namespace {

using testing::CommandResult;
using testing::RunWattcut;
using testing::TempDir;

// Runs wattcut with its address space limited to 2 GiB (the limit is inherited by the
// shell and the command; the test process gets its own back afterwards).
CommandResult RunWattcutWithin2GiB(const std::string& arguments) {
  rlimit saved{};
  getrlimit(RLIMIT_AS, &saved);
  rlimit limited = saved;
  limited.rlim_cur = std::min<rlim_t>(saved.rlim_max, rlim_t{2} << 30);
  setrlimit(RLIMIT_AS, &limited);
  CommandResult result = RunWattcut(arguments);
  setrlimit(RLIMIT_AS, &saved);
  return result;
}

// A two-stage profile whose times are multiplied by `time_scale` (energies as given).
std::string WriteProfile(const TempDir& dir, const std::string& name, double time_scale,
                         const std::string& extra_rows = "") {
  const std::string path = dir.path() + "/" + name;
  std::ostringstream csv;
  csv.precision(17);
  csv << "stage,instruction,frequency,time,energy\n";
  for (int s = 0; s < 2; ++s) {
    for (const char* kind : {"forward", "backward"}) {
      const double t = std::string(kind) == "forward" ? 0.05 : 0.09;
      csv << s << ',' << kind << ",1410," << t * time_scale << ",24\n"
          << s << ',' << kind << ",1200," << 1.2 * t * time_scale << ",21\n"
          << s << ',' << kind << ",1000," << 1.5 * t * time_scale << ",19\n";
    }
  }
  csv << extra_rows;
  std::ofstream(path) << csv.str();
  return path;
}

void ExpectRefused(const CommandResult& result, const std::string& command, const std::string& message) {
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(result.err, "wattcut " + command + ": error: " + message + "\n");
}

void ExpectRefusedWith(const CommandResult& result, const std::string& part) {
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find(part), std::string::npos) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
}

// The reproduction: 30,000 (and 20,000, 100,000) microbatches on the GPT-3
// profile died with SIGSEGV.
TEST(PlannerLimitsCommand, MicrobatchesOverTheLimit) {
  WATTCUT_REQUIRE_SHARED_FILE(profile, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  TempDir dir;
  for (const char* microbatches : {"20000", "30000", "100000"}) {
    ExpectRefused(RunWattcutWithin2GiB("frontier --profile " + profile + " --stages 8 --microbatches " + microbatches +
                                       " --p2p-power 83.64 --out " + dir.path() + "/f"),
                  "frontier", std::string("microbatches must be in [1, 16384], got ") + microbatches);
  }
  ExpectRefused(RunWattcutWithin2GiB("emulate --microbatches 30000 --out " + dir.path() + "/e"), "emulate",
                "microbatches must be in [1, 16384], got 30000");
}

TEST(PlannerLimitsCommand, StagesOverTheLimit) {
  TempDir dir;
  for (const char* command : {"frontier", "emulate"}) {
    ExpectRefused(
        RunWattcutWithin2GiB(std::string(command) + " --gpu-model a100-sxm --stages 100000 --out " + dir.path() + "/o"),
        command, "--stages: pipeline stages must be in [1, 1024], got 100000");
  }
  // With a profile, before a profile of that many stages is allocated.
  const std::string profile = WriteProfile(dir, "p.csv", 1);
  ExpectRefused(RunWattcutWithin2GiB("frontier --profile " + profile +
                                     " --stages 2000000000 --microbatches 4 --p2p-power 80 --out " + dir.path() + "/o"),
                "frontier", "--stages: pipeline stages must be in [1, 1024], got 2000000000");
  ExpectRefused(RunWattcutWithin2GiB("frontier --stages 1024 --microbatches 2048 --out " + dir.path() + "/o"),
                "frontier",
                "computations per iteration (2 x 1024 stages x 2048 microbatches = 4194304) must be at most 1048576");
}

// Times x 1e9 used 16.8 GB; x 1e12 or --unit-time 1e-9 ended in std::bad_alloc.
TEST(PlannerLimitsCommand, UnitTimeTooFineIsRefusedBeforeAllocating) {
  TempDir dir;
  const std::string profile = WriteProfile(dir, "p.csv", 1);
  ExpectRefusedWith(
      RunWattcutWithin2GiB("frontier --profile " + profile +
                           " --microbatches 4 --p2p-power 80 --unit-time 1e-9 --out " + dir.path() + "/o"),
      "unit_time_s 1e-09 s is too fine for this profile: its cost tables would have ");
  ExpectRefusedWith(
      RunWattcutWithin2GiB("emulate --profile " + profile + " --microbatches 4 --p2p-power 80 --unit-time 1e-9 --out " +
                           dir.path() + "/o"),
      "more than the limit of 16777216; use a unit time of ");
  // Times in ms written as s (x 1000): plausible, but far too fine for a 1 us unit.
  const std::string slow = WriteProfile(dir, "slow.csv", 1000);
  ExpectRefusedWith(
      RunWattcutWithin2GiB("frontier --profile " + slow + " --microbatches 4 --p2p-power 80 --unit-time 1e-6 --out " +
                           dir.path() + "/o"),
      "is too fine for this profile");
  // x 1e9 and x 1e12: no computation takes more than a day.
  for (double scale : {1e9, 1e12}) {
    const std::string scaled = WriteProfile(dir, "scaled.csv", scale);
    ExpectRefusedWith(RunWattcutWithin2GiB("frontier --profile " + scaled + " --microbatches 4 --p2p-power 80 --out " +
                                           dir.path() + "/o"),
                      ":2: column 'time': expected a time in seconds of at most 86400 (one day for one computation)");
  }
}

// 8 x 2000 at 1 ms: ~68,000 points x 32,000 computations, over 1e9.
TEST(PlannerLimitsCommand, FrontierTooLargeIsRefusedBeforeSolving) {
  WATTCUT_REQUIRE_SHARED_FILE(profile, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  TempDir dir;
  ExpectRefusedWith(
      RunWattcutWithin2GiB("frontier --profile " + profile +
                           " --stages 8 --microbatches 2000 --p2p-power 83.64 --out " + dir.path() + "/f"),
      " computations; the limits are 1000000 points and points x computations <= 1e+09: use a unit "
      "time of about ");
}

// Times of 1e308 exited 0 with T*/T_min = -nan; --unit-time 1e9, or times below the unit
// time, gave a one-point frontier at 0 s.
TEST(PlannerLimitsCommand, OverflowAndDegenerateQuantisationAreRefused) {
  TempDir dir;
  const std::string huge = WriteProfile(dir, "huge.csv", 1, "1,backward,900,1e308,1\n");
  ExpectRefused(RunWattcutWithin2GiB("frontier --profile " + huge + " --microbatches 4 --p2p-power 80 --out " +
                                     dir.path() + "/o"),
                "frontier",
                huge +
                    ":14: column 'time': expected a time in seconds of at most 86400 (one day for one computation), "
                    "got 1e308");
  const std::string profile = WriteProfile(dir, "p.csv", 1);
  for (const char* command : {"frontier", "emulate"}) {
    ExpectRefused(RunWattcutWithin2GiB(std::string(command) + " --profile " + profile +
                                       " --microbatches 4 --p2p-power 80 --unit-time 1e9 --out " + dir.path() + "/o"),
                  command,
                  "stage 0 forward: the time at 1410 MHz (0.05 s) is shorter than one unit time (1e+09 s) and would "
                  "take 0 units: use a unit time of at most 0.05 s");
  }
  const std::string fast = WriteProfile(dir, "fast.csv", 0.001);  // 50 us forwards
  ExpectRefusedWith(RunWattcutWithin2GiB("frontier --profile " + fast + " --microbatches 4 --p2p-power 80 --out " +
                                         dir.path() + "/o"),
                    "stage 0 forward: the time at 1410 MHz (5e-05 s) is shorter than one unit time (0.001 s)");
  // A unit time of 1e-300 s: every duration is more units than a double holds exactly.
  ExpectRefusedWith(
      RunWattcutWithin2GiB("frontier --profile " + profile +
                           " --microbatches 4 --p2p-power 80 --unit-time 1e-300 --out " + dir.path() + "/o"),
      "more than the 2^53 a duration may have: use a coarser unit time");
}

}  // namespace
}  // namespace wattcut
