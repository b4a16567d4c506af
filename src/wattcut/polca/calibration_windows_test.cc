#include "wattcut/polca/calibration_windows.h"

#include <gtest/gtest.h>

#include <cmath>

namespace wattcut::polca {
namespace {

// One GPU at 100 W, read every 50 ms; the load's samples as given.
Result<CalibrationWindows> Windows(const std::vector<telemetry::ServingLoadSample>& samples, int gpus = 1) {
  std::vector<telemetry::GpuPowerSeries> power;
  for (int g = 0; g < gpus; ++g) {
    power.push_back({"node", std::to_string(g), {}});
    for (double t = 0; t <= 10; t += 0.05) power.back().samples.push_back({1000 + t, 100, 1410});
  }
  WindowOptions o;
  o.sensor_average_s = 0;
  return BuildCalibrationWindows(power, nullptr, {"node", samples}, o);
}

telemetry::ServingLoadSample At(double t, double running, double prompt, double generated) {
  telemetry::ServingLoadSample s;
  s.time_s = 1000 + t;
  s.running = running;
  s.waiting = 0;
  s.prompt_tokens = prompt;
  s.generation_tokens = generated;
  return s;
}

TEST(CalibrationWindows, TheBusyShareIsTheEndsAndTheWorkBetweenThem) {
  Result<CalibrationWindows> w = Windows({At(1, 0, 0, 0), At(2, 0, 0, 0), At(3, 1, 0, 0), At(4, 1, 100, 1),
                                          At(5, 0, 100, 5), At(6, 0, 200, 8), At(7, 0, 200, 8)});
  ASSERT_TRUE(w.ok()) << w.error().message;
  ASSERT_EQ(w->windows.size(), 6u);
  const double want[] = {0, 0.5, 1, 0.5, 0.5, 0};  // idle, one end, both, one end, work between, idle
  for (size_t k = 0; k < 6; ++k) EXPECT_DOUBLE_EQ(w->windows[k].busy_share, want[k]) << k;
  EXPECT_TRUE(w->windows[0].idle);
  EXPECT_FALSE(w->windows[4].idle);
  EXPECT_TRUE(w->windows[5].idle);
}

TEST(CalibrationWindows, OnlyTheEnginesStepsSayWhenItWorked) {
  std::vector<telemetry::ServingLoadSample> s;
  for (int i = 0; i < 4; ++i) {
    telemetry::ServingLoadSample x;
    x.time_s = 1001 + i;
    x.iterations = i < 2 ? 0 : 10 * (i - 1);
    s.push_back(x);
  }
  Result<CalibrationWindows> w = Windows(s);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_DOUBLE_EQ(w->windows[0].busy_share, 0);
  EXPECT_DOUBLE_EQ(w->windows[1].busy_share, 1);
  EXPECT_DOUBLE_EQ(w->windows[1].iterations, 10);
  EXPECT_FALSE(w->has_prompt_tokens);
  // Neither gauge nor steps: refused, saying which it needs.
  for (auto& x : s) x.iterations = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(Windows(s).error().message.find("vllm:num_requests_running or vllm:iteration_tokens_total_count"),
            std::string::npos);
}

TEST(CalibrationWindows, PromptTokensTheCacheHeldAreNotComputed) {
  std::vector<telemetry::ServingLoadSample> s = {At(1, 0, 0, 0), At(2, 1, 3000, 1)};
  s[0].cached_prompt_tokens = 0;
  s[1].cached_prompt_tokens = 2048;
  Result<CalibrationWindows> w = Windows(s);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_DOUBLE_EQ(w->windows[0].prompt_tokens, 3000 - 2048);
}

TEST(CalibrationWindows, RunsJoinOfOneSetupOnly) {
  std::vector<CalibrationWindows> runs;
  runs.push_back(*Windows({At(1, 0, 0, 0), At(2, 1, 0, 0), At(3, 1, 10, 2)}));
  runs.push_back(*Windows({At(1, 0, 0, 0), At(2, 0, 0, 0)}));
  Result<CalibrationWindows> joined = JoinRuns(runs);
  ASSERT_TRUE(joined.ok()) << joined.error().message;
  EXPECT_EQ(joined->windows.size(), 3u);
  EXPECT_EQ(joined->run_starts, (std::vector<size_t>{0, 2}));
  runs.push_back(*Windows({At(1, 0, 0, 0), At(2, 0, 0, 0)}, 2));
  EXPECT_NE(JoinRuns(runs).error().message.find("run 3 has 2 GPUs, run 1 has 1"), std::string::npos);
}

}  // namespace
}  // namespace wattcut::polca
