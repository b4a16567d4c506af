#include "wattcut/polca/load_phase_times.h"

#include <gtest/gtest.h>

#include <vector>

#include "wattcut/polca/calibration_windows.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/telemetry/gpu_power_telemetry.h"
#include "wattcut/telemetry/serving_load_telemetry.h"

namespace wattcut::polca {
namespace {

// Three 1 s scrapes of a server decoding 3 requests: at the middle one `prefilling` requests are in
// a prefill (vLLM counts them running, not yet past their first token); by the last, `ended`
// requests have their first token, with 3,000 prompt tokens between them.
std::vector<CalibrationWindow> StraddlingPrefill(int prefilling, int ended) {
  telemetry::ServingLoadSeries load{"node-a", {}};
  auto sample = [](double t, double running, double prompt, double first) {
    telemetry::ServingLoadSample s;
    s.time_s = t;
    s.running = running;
    s.waiting = 0;
    s.prompt_tokens = prompt;
    s.generation_tokens = first + 10 * t;
    s.first_tokens = first;
    s.finished_requests = 0;
    return s;
  };
  load.samples = {sample(100, 0, 0, 0), sample(101, 3, 0, 3), sample(102, 3 + prefilling, 0, 3),
                  sample(103, 3 + ended, 3000, 3 + ended)};
  std::vector<telemetry::GpuPowerSeries> gpus{{"node-a", "0", {}}};
  for (double t = 99; t <= 104; t += 0.25) gpus[0].samples.push_back({t, 200, 1410});
  Result<CalibrationWindows> w = BuildCalibrationWindows(gpus, nullptr, load, WindowOptions{});
  EXPECT_TRUE(w.ok()) << w.error().message;
  return w.ok() ? w->windows : std::vector<CalibrationWindow>{};
}

TEST(LoadPhaseTimesTest, TheWindowsCountTheRequestsInAPrefillAtEachScrape) {
  const std::vector<CalibrationWindow> w = StraddlingPrefill(2, 2);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[1].prefilling_end, 2);
  EXPECT_TRUE(w[1].prefill_at_end());
  EXPECT_EQ(w[2].prefilling_start, 2);
  EXPECT_EQ(w[2].prefilling_end, 0);
  EXPECT_FALSE(w[0].prefill_at_start());
}

// A batched prefill in progress at a scrape is one prefill holding every request in it: the
// tokens of the window where it ends are its own, not shared with a prefill made up beside it.
TEST(LoadPhaseTimesTest, ABatchedPrefillAcrossAScrapeHoldsAllItsRequestsTokens) {
  const std::vector<CalibrationWindow> w = StraddlingPrefill(2, 2);
  ASSERT_EQ(w.size(), 3u);
  const std::vector<WindowPhaseTimes> p = ReconstructPhaseTimes(w, BuiltInConfig("a100").value());
  ASSERT_EQ(p[2].prefill.size(), 1u);
  EXPECT_DOUBLE_EQ(p[2].prefill[0].tokens, 3000);
  EXPECT_TRUE(p[2].tokens_known());
  ASSERT_EQ(p[1].prefill.size(), 1u);
  EXPECT_DOUBLE_EQ(p[1].prefill[0].tokens, 3000);
  EXPECT_FALSE(p[1].prefill[0].whole);
}

// One request in a prefill at the scrape and two first tokens after it: the straddler and a
// second prefill inside the window share the tokens, and the split is not known.
TEST(LoadPhaseTimesTest, ASinglePrefillAcrossAScrapeSharesTheTokensOfTheOthersEndingWithIt) {
  const std::vector<CalibrationWindow> w = StraddlingPrefill(1, 2);
  ASSERT_EQ(w.size(), 3u);
  const std::vector<WindowPhaseTimes> p = ReconstructPhaseTimes(w, BuiltInConfig("a100").value());
  ASSERT_EQ(p[2].prefill.size(), 2u);
  EXPECT_NEAR(p[2].prefill[0].tokens + p[2].prefill[1].tokens, 3000, 1e-6);
  EXPECT_FALSE(p[2].tokens_known());
}

}  // namespace
}  // namespace wattcut::polca
