// The engine-state power model `polca calibrate` fits when the served model's timing is not known
// (a real recording: the base config's service.* is another model's): a GPU's power is a step from
// idle to a busy floor while the engine has work, plus terms that follow the load (issue 52):
//
//   P = idle_w + busy_step_w * busy + prompt_j_per_token * prompt tokens/s
//       + prompt_j_per_token_squared * prompt tokens^2/s
//       + generation_j_per_token * generated tokens/s + w_per_running_request * busy * (batch - 1)
//       + j_per_engine_step * engine steps/s + w_while_stalled * stalled share
//
// where the stalled share is the busy share less the time the window's engine steps take at the
// median decode step time: a long prefill step fills a window with few steps.
//
// per window (calibration_windows.h: `busy` is its busy share, the batch its decode batch), every
// term but idle scaled by (f / f_max)^clock_exponent at the window's SM clock. A
// prefill draws its power before vLLM's prompt counter moves (at the first token), so a window's
// prompt tokens are spread back over the prefill's length, `prefill_s_per_token` x tokens,
// averaged over where in the window it ended, and the windows it covers count as busy: the one
// shape parameter. Where the gauges show long prefills (busy windows with almost no engine steps
// before the prompt counter moves), their length per token is the spread; otherwise it is chosen
// from a grid by the fit's residual. The model is then read as the sensor reads power: through a trailing box of
// `sensor_average_s` (1 s for NVML's averaged power, 0 for instant samples), so that an H100's 1 s average and an
// A100's instants are fitted alike.
//
// A fit bounded by physics (bounded_least_squares.h): idle within [5 %, 60 %] of TDP; the busy
// step within [0, TDP]; each load term at most kLoadTermTdpShare of TDP at the highest load the
// fit part holds; none negative. A bound the answer rests on is named in `bound_notes`.
// What the data cannot support is not fitted: idle from less than `min_idle_s` of idle is the base
// config's; a load term whose load never varies is 0; less than `min_busy_s` of busy time is
// refused, naming it.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/polca/calibration_windows.h"
#include "wattcut/polca/polca_config.h"

namespace wattcut::polca {

struct BusyFitOptions {
  double min_idle_s = 10;  // idle windows in the fit part to measure idle power
  double min_busy_s = 20;  // busy time in the fit part for the busy step and the load terms
};

// The highest share of TDP one load term may add at the fit part's highest load.
constexpr double kLoadTermTdpShare = 1.0;

struct BusyPowerLevels {
  double idle_w = 0;
  double busy_step_w = 0;
  double prompt_j_per_token = 0;
  double generation_j_per_token = 0;
  double w_per_running_request = 0;
  // A prefill's energy beyond linear in its tokens (its power rises with its size): J per token^2.
  double prompt_j_per_token_squared = 0;
  // Each engine step (a forward pass: vllm:iteration_tokens_total_count) reads the weights once,
  // whatever its batch: J per step. 0 when the load does not count steps.
  double j_per_engine_step = 0;
  // Watts over the busy floor while the engine is busy with fewer steps than its time holds at its
  // decode step time: a long (prefill) step running, which vLLM counts only when it ends.
  double w_while_stalled = 0;
};

struct BusyPowerFitResult {
  BusyPowerLevels levels;
  double prefill_s_per_token = 0;
  // The above-idle terms scale as (f / f_max)^clock_exponent: measured from a grid when the fit part
  // holds two SM clocks or more with a minute of busy time each, else the base config's token one.
  double clock_exponent = 1;
  bool clock_exponent_measured = false;
  bool idle_measured = true;
  std::vector<std::string> unmeasured;   // terms the data could not support, and why
  std::vector<std::string> bound_notes;  // bounds the answer rests on
  std::vector<double> predicted_w;       // per window, as the sensor reads it
  double fit_rms_w = 0;
};

class BusyPowerFit {
 public:
  // `in_fit[k]`: window k is in the fit part.
  BusyPowerFit(const CalibrationWindows& windows, const std::vector<bool>& in_fit, const PolcaConfig& base,
               double sensor_average_s, const BusyFitOptions& options);
  Result<BusyPowerFitResult> Run();

 private:
  static constexpr int kTerms = 8;
  using Row = std::array<double, kTerms>;

  Status CheckSupport();
  // first_[k]: the first window of k's stretch of adjacent windows of one run.
  void FindStretches();
  // Every window's terms for a spread of the prompt tokens, at the maximum clock, as they are
  // (before the sensor reads them): what does not depend on the clock exponent.
  std::vector<Row> Spread(double prefill_s_per_token) const;
  // Those terms at each window's clock for `exponent`, read through the sensor.
  std::vector<Row> Features(const std::vector<Row>& spread, double exponent) const;
  // The bounded fit for one spread: false when the bounds cannot be met.
  bool Fit(const std::vector<Row>& rows, BusyPowerFitResult& out, double& rss) const;
  void SearchSpread();
  // The spread from long prefills the gauges show (MeasureSpread), when there are enough.
  void MeasureSpread();

  const CalibrationWindows& data_;
  const std::vector<bool>& in_fit_;
  PolcaConfig base_;
  double sensor_average_s_;
  BusyFitOptions options_;
  bool idle_measured_ = true;
  bool fit_exponent_ = false;
  double decode_step_s_ = 0;                // median decode step time (0: the load counts no steps)
  double measured_spread_s_per_token_ = 0;  // 0: not measured, searched instead
  std::vector<size_t> first_;
  std::array<bool, kTerms> measured_{};
  BusyPowerFitResult result_;
};

}  // namespace wattcut::polca
