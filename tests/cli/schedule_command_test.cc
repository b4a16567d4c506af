// `wattcut schedule`, and the interleaved and ZB-H1 schedules through `wattcut frontier` and
// `wattcut emulate`, run as a user would.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/cli/command_runner.h"

namespace wattcut {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::RunWattcut;
using testing::TempDir;

TEST(ScheduleCommand, PrintsEachDevicesOrder) {
  auto result = RunWattcut("schedule --schedule interleaved --virtual-stages 2 --stages 2 --microbatches 4");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("interleaved, 2 devices x 2 chunks, 4 microbatches"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("device 0: F0 F1 F0.1 F1.1 F2 B0.1 F3 B1.1 F2.1 B0 F3.1 B1 B2.1 B3.1 B2 B3\n"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("device 1: F0 F1 F0.1 B0.1 F1.1 B1.1 F2 B0 F3 B1 F2.1 B2.1 F3.1 B3.1 B2 B3\n"),
            std::string::npos)
      << result.out;
  // The built-in model's stages are cut into chunks: said on stderr.
  EXPECT_NE(result.err.find("warning: each of the built-in model's 2 stages is cut into 2 chunks"), std::string::npos)
      << result.err;

  auto zb = RunWattcut("schedule --schedule zbh1 --stages 2 --microbatches 2");
  ASSERT_EQ(zb.exit_code, 0) << zb.err;
  EXPECT_NE(zb.out.find("device 0: F0 F1 B0 W0 B1 W1\ndevice 1: F0 B0 F1 B1 W0 W1\n"), std::string::npos) << zb.out;
  EXPECT_NE(zb.err.find("warning: the profile has no backward_input / backward_weight rows: zb-h1 plans each as half "
                        "of the backward's time and energy at every frequency"),
            std::string::npos)
      << zb.err;
}

TEST(ScheduleCommand, DrawsTheFastestPlansTimeline) {
  TempDir dir;
  const std::string svg = dir.path() + "/zb.svg";
  auto result = RunWattcut("schedule --schedule zb-h1 --stages 3 --microbatches 4 --svg " + svg);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string text = ReadFile(svg);
  EXPECT_NE(text.find("<svg"), std::string::npos) << text.substr(0, 80);
  // One box per computation, labelled in the schedule's notation.
  EXPECT_NE(text.find(">W3<"), std::string::npos);
  EXPECT_NE(text.find("stage 2"), std::string::npos);
}

TEST(ScheduleCommand, RefusesShapesTheScheduleCannotRun) {
  auto no_chunks = RunWattcut("schedule --schedule interleaved --stages 4 --microbatches 8");
  EXPECT_EQ(no_chunks.exit_code, 1);
  EXPECT_EQ(no_chunks.err,
            "wattcut schedule: error: --schedule interleaved needs --virtual-stages V, the model chunks per device (2 "
            "or more)\n");
  auto stray = RunWattcut("schedule --schedule 1f1b --virtual-stages 2 --stages 4");
  EXPECT_EQ(stray.exit_code, 1);
  EXPECT_EQ(stray.err, "wattcut schedule: error: --virtual-stages 2 needs --schedule interleaved\n");
  auto multiple = RunWattcut("schedule --schedule interleaved --virtual-stages 2 --stages 4 --microbatches 6");
  EXPECT_EQ(multiple.exit_code, 1);
  EXPECT_NE(multiple.err.find(
                "wattcut schedule: error: the interleaved schedule needs the microbatches (6) to be a multiple of the "
                "pipeline devices (4), as Megatron-LM requires\n"),
            std::string::npos)
      << multiple.err;
}

TEST(ScheduleCommand, AProfileNeedsAStagePerChunk) {
  TempDir dir;
  const std::string profile = dir.path() + "/p.csv";
  {
    std::ofstream out(profile);
    out << "stage,instruction,frequency,time,energy\n";
    for (int s = 0; s < 3; ++s) {
      out << s << ",forward,1410,0.01,2\n" << s << ",backward,1410,0.02,4\n";
    }
  }
  auto odd = RunWattcut("schedule --schedule interleaved --virtual-stages 2 --profile " + profile +
                        " --microbatches 2 --p2p-power 50");
  EXPECT_EQ(odd.exit_code, 1);
  EXPECT_EQ(odd.err, "wattcut schedule: error: " + profile +
                         ": 3 stages are not a multiple of --virtual-stages 2 (the profile needs a stage per model "
                         "chunk: devices x virtual stages)\n");
  // --stages 2 x 2 chunks: the profile must have 4 stages.
  auto short_profile = RunWattcut("schedule --schedule interleaved --virtual-stages 2 --stages 2 --profile " + profile +
                                  " --microbatches 2 --p2p-power 50");
  EXPECT_EQ(short_profile.exit_code, 1);
  EXPECT_NE(short_profile.err.find("stage 3 has no 'forward' measurements"), std::string::npos) << short_profile.err;
}

TEST(ScheduleCommand, FrontierPlansTheNewSchedulesAndEmulateRefusesThem) {
  TempDir dir;
  auto interleaved = RunWattcut(
      "frontier --schedule interleaved --virtual-stages 2 --stages 4 --microbatches 8 --out " + dir.path() + "/i");
  ASSERT_EQ(interleaved.exit_code, 0) << interleaved.err;
  EXPECT_NE(interleaved.out.find("intrinsic saving of the fastest plan vs AllMax"), std::string::npos)
      << interleaved.out;
  auto zb = RunWattcut("frontier --schedule zb-h1 --stages 4 --microbatches 8 --out " + dir.path() + "/z");
  ASSERT_EQ(zb.exit_code, 0) << zb.err;
  auto emulate = RunWattcut("emulate --schedule zb-h1 --stages 4 --microbatches 8 --out " + dir.path() + "/e");
  EXPECT_EQ(emulate.exit_code, 1);
  EXPECT_EQ(emulate.err,
            "wattcut emulate: error: --schedule zb-h1: the emulation's EnvPipe and Zeus baselines model 1f1b and "
            "gpipe only; 'wattcut frontier' and 'wattcut schedule' plan and draw this schedule\n");
  EXPECT_FALSE(fs::exists(dir.path() + "/e"));
}

}  // namespace
}  // namespace wattcut
