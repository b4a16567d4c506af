#include "wattcut/polca/inference_power_model.h"

#include <gtest/gtest.h>

namespace wattcut::polca {
namespace {

// The calibration claims of docs/polca.md, checked against the built-in A100 model.
TEST(InferencePowerModel, A100ReproducesThePaperCharacterisation) {
  PolcaConfig config = *BuiltInConfig("a100");
  InferencePowerModel m(config);
  const double tdp = config.gpu.tdp_w;
  // Idle ~20 % of TDP; prompt at or above TDP for long prompts; token phase lower.
  EXPECT_NEAR(m.GpuIdleW() / tdp, 0.20, 0.01);
  EXPECT_GE(m.GpuPromptW(4096, 1410), tdp);
  EXPECT_LT(m.GpuTokenW(32, 1410), 0.8 * tdp);
  EXPECT_LT(m.GpuTokenW(1, 1410), m.GpuTokenW(32, 1410));
  // Prompt phase under 1 s for a typical (p99) conversation prompt.
  EXPECT_LT(m.PromptSeconds(4142), 1.2);
  EXPECT_LT(m.PromptSeconds(1020), 0.35);
  // Locking to 1110 MHz: about 20 % less peak (prompt) GPU power for about 7 % slowdown
  // of the token-dominated end-to-end inference time.
  double peak_cut = 1 - m.GpuPromptW(4096, 1110) / m.GpuPromptW(4096, 1410);
  EXPECT_NEAR(peak_cut, 0.20, 0.02);
  EXPECT_NEAR(m.TokenSlowdown(1110) - 1, 0.07, 0.01);
  EXPECT_GT(m.PromptSlowdown(1110), m.TokenSlowdown(1110));  // prompt is compute-bound
  // Server: measured peak <= 5.7 kW; GPUs about half of server power at peak.
  double server_peak = m.ServerPromptW(8192, 1410);
  EXPECT_LE(server_peak, 5700);
  EXPECT_GT(server_peak, 5000);
  double gpu_share = config.server.gpus * m.GpuPromptW(8192, 1410) / server_peak;
  EXPECT_GT(gpu_share, 0.5);
  EXPECT_LT(gpu_share, 0.65);
}

TEST(InferencePowerModel, MonotoneInClockAndExactAtMaxClock) {
  InferencePowerModel m(*BuiltInConfig("a100"));
  double previous = 0;
  for (double f = 300; f <= 1410; f += 100) {
    double w = m.GpuTokenW(16, f);
    EXPECT_GT(w, previous);
    previous = w;
    EXPECT_GE(m.TokenSlowdown(f), 1.0);
  }
  EXPECT_DOUBLE_EQ(m.TokenSlowdown(1410), 1.0);
  EXPECT_DOUBLE_EQ(m.PromptSlowdown(1410), 1.0);
  EXPECT_GT(m.ServerTokenW(32, 1410), m.ServerTokenW(1, 1410));
  EXPECT_GT(m.ServerTokenW(1, 1410), m.ServerIdleW());
}

TEST(InferencePowerModel, PowerCapMapsToTheClockThatFits) {
  InferencePowerModel m(*BuiltInConfig("a100"));
  double f = m.PromptFreqUnderCap(4096, 300);
  EXPECT_LT(f, 1410);
  EXPECT_NEAR(m.GpuPromptW(4096, f), 300, 1e-6);
  EXPECT_DOUBLE_EQ(m.TokenFreqUnderCap(1, 300), 1410);    // token phase already fits
  EXPECT_DOUBLE_EQ(m.PromptFreqUnderCap(4096, 50), 210);  // below idle: minimum clock
}

}  // namespace
}  // namespace wattcut::polca
