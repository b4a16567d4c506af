#include "wattcut/slurm/wattcut_mode.h"

#include <gtest/gtest.h>

namespace wattcut::slurm {
namespace {

TEST(WattcutMode, EveryFormReadsAndWritesBack) {
  for (const char* text : {"off", "fastest", "least-energy", "power:300", "power:287.5"}) {
    auto mode = ParseWattcutMode(text);
    ASSERT_TRUE(mode.ok()) << text << ": " << mode.error().message;
    EXPECT_EQ(mode->Text(), text);
  }
  EXPECT_EQ(ParseWattcutMode("power:300")->power_per_gpu_w, 300);
}

TEST(WattcutMode, AnythingElseSaysWhatIsAccepted) {
  const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"", "--wattcut=: expected off, fastest, least-energy or power:WATTS (watts per GPU, e.g. power:300)"},
      {"Fastest",
       "--wattcut=Fastest: expected off, fastest, least-energy or power:WATTS (watts per GPU, e.g. power:300)"},
      {"power:",
       "--wattcut=power:: the power is not a number; expected off, fastest, least-energy or power:WATTS "
       "(watts per GPU, e.g. power:300)"},
      {"power:300W",
       "--wattcut=power:300W: the power is not a number; expected off, fastest, least-energy or "
       "power:WATTS (watts per GPU, e.g. power:300)"},
      {"power:nan",
       "--wattcut=power:nan: the power is not a number; expected off, fastest, least-energy or "
       "power:WATTS (watts per GPU, e.g. power:300)"},
      {"power:0", "--wattcut=power:0: the power must be in (0, 10000] watts per GPU"},
      {"power:-5", "--wattcut=power:-5: the power must be in (0, 10000] watts per GPU"},
      {"power:20000", "--wattcut=power:20000: the power must be in (0, 10000] watts per GPU"},
  };
  for (const auto& c : cases) {
    auto mode = ParseWattcutMode(c.text);
    ASSERT_FALSE(mode.ok()) << c.text;
    EXPECT_EQ(mode.error().message, c.message);
  }
}

}  // namespace
}  // namespace wattcut::slurm
