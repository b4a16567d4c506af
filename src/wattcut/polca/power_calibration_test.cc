#include "wattcut/polca/power_calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "wattcut/base/shared_data_testing.h"
#include "wattcut/polca/arrival_expansion.h"
#include "wattcut/polca/calibration_report.h"
#include "wattcut/polca/calibration_windows.h"
#include "wattcut/polca/request_trace.h"
#include "wattcut/polca/telemetry_synthesis.h"

namespace wattcut::polca {
namespace {

// The server the round trip measures: power parameters unlike the A100 defaults.
PolcaConfig TrueServer() {
  PolcaConfig c = BuiltInConfig("a100").value();
  c.gpu.idle_w = 62;
  c.gpu.prompt_w_small = 250;
  c.gpu.prompt_w_large = 395;
  c.gpu.prompt_tokens_for_peak = 2600;
  c.gpu.token_w_batch1 = 150;
  c.gpu.token_w_full_batch = 310;
  c.gpu.prompt_power_freq_exponent = 1.6;
  c.gpu.token_power_freq_exponent = 0.7;
  c.server.other_idle_w = 1450;
  c.server.other_w_per_gpu_w = 0.22;
  return c;
}

// Two hours of the conversation trace's load on one server (0.5 requests/s), drained for three
// minutes every hour (idle periods), at four clocks that change every 7.5 minutes.
std::vector<Arrival> TwoHoursOfLoad(const RequestTrace& trace, double duration_s = 7200) {
  CalibrationRunSpec spec;
  spec.duration_s = duration_s;
  return CalibrationRunArrivals(trace, spec);
}

std::vector<ClockStep> FourClocks(double duration_s = 7200) {
  return ClockCycle({1410, 1200, 1005, 1305}, 450, duration_s);
}

SynthesisOptions OneHour() {
  SynthesisOptions o;
  o.duration_s = 3600;
  return o;
}

Result<CalibrationResult> Calibrate(const SynthesizedTelemetry& t, double hold_back = 0.5) {
  Result<CalibrationWindows> w =
      BuildCalibrationWindows(t.power.gpus, &t.power.servers[0], t.load.servers[0], WindowOptions{});
  if (!w.ok()) return w.error();
  CalibrationOptions o;
  o.hold_back_fraction = hold_back;
  return CalibratePowerModel(*w, BuiltInConfig("a100").value(), o);
}

double Relative(double got, double want) { return std::abs(got - want) / std::abs(want); }

// Every parameter within 3 % and the held-back hour's P99 under 5 % of TDP (issue 27).
constexpr double kLevelTolerance = 0.03;
constexpr double kPromptTolerance = 0.03;
constexpr double kHeldBackP99Tdp = 0.05;

TEST(PowerCalibrationTest, RoundTripRecoversEveryParameterAndPredictsTheHeldBackHour) {
  WATTCUT_REQUIRE_SHARED_FILE(path, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  const RequestTrace trace = RequestTrace::Read(path).value();
  const PolcaConfig truth = TrueServer();
  Result<SynthesizedTelemetry> t = SynthesizeServerTelemetry(truth, TwoHoursOfLoad(trace), FourClocks(), {});
  ASSERT_TRUE(t.ok()) << t.error().message;
  Result<CalibrationResult> r = Calibrate(*t);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const GpuSpec& g = r->config.gpu;
  EXPECT_LT(Relative(g.idle_w, truth.gpu.idle_w), kLevelTolerance) << g.idle_w;
  EXPECT_LT(Relative(g.prompt_w_small, truth.gpu.prompt_w_small), kPromptTolerance) << g.prompt_w_small;
  EXPECT_LT(Relative(g.prompt_w_large, truth.gpu.prompt_w_large), kPromptTolerance) << g.prompt_w_large;
  EXPECT_LT(Relative(g.prompt_tokens_for_peak, truth.gpu.prompt_tokens_for_peak), kPromptTolerance)
      << g.prompt_tokens_for_peak;
  EXPECT_LT(Relative(g.token_w_batch1, truth.gpu.token_w_batch1), kLevelTolerance) << g.token_w_batch1;
  EXPECT_LT(Relative(g.token_w_full_batch, truth.gpu.token_w_full_batch), kLevelTolerance) << g.token_w_full_batch;
  EXPECT_LT(Relative(g.prompt_power_freq_exponent, truth.gpu.prompt_power_freq_exponent), kLevelTolerance)
      << g.prompt_power_freq_exponent;
  EXPECT_LT(Relative(g.token_power_freq_exponent, truth.gpu.token_power_freq_exponent), kLevelTolerance)
      << g.token_power_freq_exponent;
  EXPECT_LT(Relative(r->config.server.other_idle_w, truth.server.other_idle_w), kLevelTolerance)
      << r->config.server.other_idle_w;
  EXPECT_LT(Relative(r->config.server.other_w_per_gpu_w, truth.server.other_w_per_gpu_w), kLevelTolerance)
      << r->config.server.other_w_per_gpu_w;
  for (const FittedParameter& p : r->parameters) EXPECT_TRUE(p.measured) << p.key << ": " << p.note;
  // The held-back hour, driven by its own load.
  EXPECT_GE(r->holdout.windows, 3500);
  EXPECT_EQ(r->model, "phase");
  EXPECT_LT(r->holdout.p99_abs_tdp, kHeldBackP99Tdp) << r->holdout.p99_abs_w << " W";
  EXPECT_LT(r->holdout_1s.p99_abs_tdp, kHeldBackP99Tdp) << r->holdout_1s.p99_abs_w << " W";
  EXPECT_LT(r->holdout.mean_abs_tdp, 0.01) << r->holdout.mean_abs_w << " W";
  EXPECT_LT(std::abs(r->holdout_energy_error), 0.01);
  EXPECT_EQ(r->clocks_mhz.size(), 4u);
  std::printf(
      "fit rms %.2f W; held back: mean %.2f W, P99 %.2f W (%.2f %% TDP); idle P99 %.2f, prefill P99 %.2f, "
      "decode P99 %.2f W; energy/min mean %.3f %% max %.3f %%\n",
      r->fit_rms_w, r->holdout.mean_abs_w, r->holdout.p99_abs_w, 100 * r->holdout.p99_abs_tdp,
      r->holdout_idle.p99_abs_w, r->holdout_prefill.p99_abs_w, r->holdout_decode.p99_abs_w,
      100 * r->energy_per_minute_mean_abs, 100 * r->energy_per_minute_max_abs);
  for (const FittedParameter& p : r->parameters) std::printf("  %s = %g\n", p.key.c_str(), p.value);
}

// Issue 52: the same round trip with only the counters real recorders give (no
// vllm:time_to_first_token_seconds_count, no vllm:request_success_total): before, its held-back P99
// was 39 % of TDP. The engine-state model holds it at 7.1 % (mean 1.5 %, energy within 0.1 %);
// without its stalled share (busy windows with fewer engine steps than their time holds, where a
// prefill ran) it was 20 %.
TEST(PowerCalibrationTest, RoundTripWithTheRecordersCountersOnly) {
  WATTCUT_REQUIRE_SHARED_FILE(path, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  const RequestTrace trace = RequestTrace::Read(path).value();
  Result<SynthesizedTelemetry> t = SynthesizeServerTelemetry(TrueServer(), TwoHoursOfLoad(trace), FourClocks(), {});
  ASSERT_TRUE(t.ok()) << t.error().message;
  for (telemetry::ServingLoadSample& s : t->load.servers[0].samples) {
    s.first_tokens = std::numeric_limits<double>::quiet_NaN();
    s.finished_requests = std::numeric_limits<double>::quiet_NaN();
  }
  Result<CalibrationResult> r = Calibrate(*t);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->model, "busy");
  EXPECT_LT(r->holdout_1s.mean_abs_tdp, 0.02) << r->holdout_1s.mean_abs_w << " W";
  EXPECT_LT(r->holdout_1s.p99_abs_tdp, 0.08) << r->holdout_1s.p99_abs_w << " W";
  EXPECT_LT(std::abs(r->holdout_energy_error), 0.01);
  std::printf("%s\n", CalibrationSummaryText(*r).c_str());
  std::printf("model %s; held back 1 s: mean %.2f %% P99 %.2f %% of TDP; energy %.2f %%\n", r->model.c_str(),
              100 * r->holdout_1s.mean_abs_tdp, 100 * r->holdout_1s.p99_abs_tdp, 100 * r->holdout_energy_error);
}

TEST(PowerCalibrationTest, OneClockOnlyLeavesTheExponentsUnmeasuredAndSaysSo) {
  WATTCUT_REQUIRE_SHARED_FILE(path, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  const RequestTrace trace = RequestTrace::Read(path).value();
  Result<SynthesizedTelemetry> t = SynthesizeServerTelemetry(TrueServer(), TwoHoursOfLoad(trace, 3600), {}, OneHour());
  ASSERT_TRUE(t.ok()) << t.error().message;
  Result<CalibrationResult> r = Calibrate(*t);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const PolcaConfig base = BuiltInConfig("a100").value();
  EXPECT_EQ(r->config.gpu.prompt_power_freq_exponent, base.gpu.prompt_power_freq_exponent);
  EXPECT_EQ(r->config.gpu.token_power_freq_exponent, base.gpu.token_power_freq_exponent);
  int unmeasured = 0;
  for (const FittedParameter& p : r->parameters) {
    if (p.key.find("freq_exponent") != std::string::npos) {
      EXPECT_FALSE(p.measured);
      EXPECT_NE(p.note.find("one SM clock"), std::string::npos) << p.note;
      ++unmeasured;
    }
  }
  EXPECT_EQ(unmeasured, 2);
  EXPECT_LT(Relative(r->config.gpu.idle_w, 62), kLevelTolerance);
}

// Without an idle period the idle power cannot be measured: it is the base config's, said so, and
// the rest is fitted (issue 52: only what the data cannot support is left out).
TEST(PowerCalibrationTest, ARunWithoutAnIdlePeriodKeepsTheBaseIdlePowerAndSaysSo) {
  WATTCUT_REQUIRE_SHARED_FILE(path, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  const RequestTrace trace = RequestTrace::Read(path).value();
  ExpansionOptions o;
  o.duration_s = 2400;
  o.peak_rate_per_s = 1.5;
  o.diurnal_trough = 1.0;
  o.low_priority_share = 0;
  std::vector<Arrival> busy = ArrivalExpansion(trace, o).All();
  SynthesisOptions so;
  so.duration_s = 2400;
  Result<SynthesizedTelemetry> t = SynthesizeServerTelemetry(TrueServer(), busy, FourClocks(2400), so);
  ASSERT_TRUE(t.ok());
  Result<CalibrationResult> r = Calibrate(*t);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->model, "busy");
  EXPECT_EQ(r->config.gpu.idle_w, BuiltInConfig("a100").value().gpu.idle_w);
  std::string notes;
  for (const std::string& n : r->notes) notes += n + "\n";
  EXPECT_NE(notes.find("gpu.idle_w: the fit part has"), std::string::npos) << notes;
  EXPECT_NE(notes.find("no idle period"), std::string::npos) << notes;  // why the phase model was not fitted
  for (const FittedParameter& p : r->parameters) {
    if (p.key == "gpu.idle_w") {
      EXPECT_FALSE(p.measured);
    }
  }
}

TEST(PowerCalibrationTest, ARunTooShortForAnyModelIsRefusedNamingWhatIsMissing) {
  WATTCUT_REQUIRE_SHARED_FILE(path, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  const RequestTrace trace = RequestTrace::Read(path).value();
  SynthesisOptions so;
  so.duration_s = 40;
  CalibrationRunSpec spec;
  spec.duration_s = 40;
  spec.rate_per_s = 0.05;
  Result<SynthesizedTelemetry> t = SynthesizeServerTelemetry(TrueServer(), CalibrationRunArrivals(trace, spec), {}, so);
  ASSERT_TRUE(t.ok());
  Result<CalibrationResult> r = Calibrate(*t);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("too little load"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("too short"), std::string::npos) << r.error().message;
}

TEST(PowerCalibrationTest, TheSynthesizedCountersMatchTheServedRequests) {
  WATTCUT_REQUIRE_SHARED_FILE(path, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  const RequestTrace trace = RequestTrace::Read(path).value();
  SynthesisOptions so;
  so.duration_s = 1800;
  std::vector<Arrival> a = TwoHoursOfLoad(trace, 1800);
  Result<SynthesizedTelemetry> t = SynthesizeServerTelemetry(TrueServer(), a, {}, so);
  ASSERT_TRUE(t.ok());
  const auto& s = t->load.servers[0].samples;
  ASSERT_EQ(s.size(), 1801u);
  for (size_t i = 1; i < s.size(); ++i) {
    ASSERT_GE(s[i].prompt_tokens, s[i - 1].prompt_tokens);
    ASSERT_GE(s[i].generation_tokens, s[i - 1].generation_tokens);
    ASSERT_GE(s[i].first_tokens, s[i].finished_requests);
  }
  // Every request that arrived early enough has had its prefill; prompt tokens add up.
  double prompt = 0;
  int64_t early = 0;
  for (const Arrival& x : a) {
    if (x.time_s < 1500) {
      prompt += x.context_tokens;
      ++early;
    }
  }
  EXPECT_GE(s.back().first_tokens, static_cast<double>(early));
  EXPECT_GE(s.back().prompt_tokens, prompt);
  // GPU power: 8 GPUs, 4 samples a second, idle at the start.
  EXPECT_EQ(t->power.gpus.size(), 8u);
  EXPECT_EQ(t->power.gpus[0].samples.size(), 7200u);
}

}  // namespace
}  // namespace wattcut::polca
