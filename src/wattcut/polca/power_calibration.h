// `polca calibrate`'s fit: the per-GPU power model of inference_power_model.h from one server's
// measured power and serving load (calibration_windows.h), with the phase times the load implies
// (load_phase_times.h). The fit, as a class with named phases:
//
//  1. Split: the first (1 - hold_back) of the windows, by time, fit; the rest are held back.
//  2. Check support: what the data must hold for each parameter, and a refusal naming what is
//     missing (too short, no idle period, no prefill, no decode) rather than a number made up.
//  3. Fit shape, levels (over the windows whose clock is steady, whose load fits in them and whose
//     prefills' tokens are each prefill's own, not a share of several): the window's mean GPU power is linear in the
//     five levels (idle, prompt power of a tiny and of a peak prefill, decode power at batch 1 and at a full batch)
//     once the three shape parameters are fixed (the prompt tokens at peak power and the two clock exponents): least
//     squares for the levels inside a search of the shape (a log grid of the tokens, then golden-section passes over
//     each parameter in turn). The exponents are fitted only when the data holds at least two SM clocks with enough
//     busy time at each; otherwise they stay the base config's and the result says so.
//  4. Fit the non-GPU part, when server-level power exists: server = other_idle_w +
//     gpus x GPU power x (1 + other_w_per_gpu_w), a straight line through 30 s blocks of windows.
//  5. Evaluate: the fitted model, driven by the held-back windows' load, against their measured
//     power: mean and P99 absolute error of window power (W and % of TDP), by window kind (idle,
//     prefill, decode), and of energy per minute.
//
// The service timing (service.*, gpu.*_compute_fraction) is the base config's: calibrate fits
// power, not speed. The share of windows whose load the timing cannot fit in them is reported.
#pragma once

#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/polca/busy_power_fit.h"
#include "wattcut/polca/calibration_windows.h"
#include "wattcut/polca/load_phase_times.h"
#include "wattcut/polca/polca_config.h"

namespace wattcut::polca {

struct CalibrationOptions {
  double hold_back_fraction = 1.0 / 3;  // of the windows, by time, at the end; (0, 0.9]
  double min_fit_s = 600;               // windows in the fit part
  double min_idle_s = 30;               // idle windows in the fit part
  double min_prefill_s = 20;            // prefill time in the fit part
  double min_decode_s = 60;
  double min_busy_s_per_clock = 60;  // prefill + decode time at a clock for it to count
  // The power reading's own averaging (SensorAverageSecondsFor): the engine-state model is read
  // through it.
  double sensor_average_s = 1.0;
  BusyFitOptions busy;
};

struct FittedParameter {
  std::string key;  // the config key, e.g. "gpu.idle_w"
  double value = 0;
  double base_value = 0;
  bool measured = false;  // false: kept from the base config (`note` says why)
  std::string note;
};

struct WindowErrorStats {
  int windows = 0;
  double mean_abs_w = 0, p99_abs_w = 0, max_abs_w = 0, mean_signed_w = 0;
  double mean_abs_tdp = 0, p99_abs_tdp = 0;  // fractions of the GPU's TDP
};

enum class WindowKind { kIdle, kPrefill, kDecode };

struct PredictedWindow {
  double time_s = 0;  // end of the window, Unix seconds
  double length_s = 0;
  double measured_w = 0;  // per GPU
  double predicted_w = 0;
  WindowKind kind = WindowKind::kDecode;
};

struct CalibrationResult {
  PolcaConfig config;  // the base with the fitted values
  // The model fitted: "phase" (the phase levels, with the served model's timing) or "busy" (the
  // engine-state model, busy_power_fit.h), whichever has the smaller 1 s error over the fit part.
  std::string model;
  BusyPowerLevels busy;  // when model == "busy"
  double prefill_s_per_token = 0;
  std::vector<FittedParameter> parameters;
  std::vector<std::string> notes;
  std::vector<double> clocks_mhz;  // the steady clocks with enough busy time, highest first
  double fit_from_s = 0, fit_to_s = 0, holdout_from_s = 0, holdout_to_s = 0;  // of the first run
  double fit_s = 0, holdout_s = 0;                                            // every run's, in total
  int fit_windows = 0;
  double overfull_share = 0;  // of fit windows: load the timing does not fit in the window
  double fit_rms_w = 0;
  WindowErrorStats holdout, holdout_idle, holdout_prefill, holdout_decode;
  WindowErrorStats holdout_1s;  // over 1 s blocks of consecutive held-back windows
  int holdout_minutes = 0;
  double energy_per_minute_mean_abs = 0, energy_per_minute_max_abs = 0;  // fractions
  double holdout_energy_error = 0;  // (modelled - measured) / measured, the whole held-back part
  std::vector<PredictedWindow> fit, held_back;
};

class PowerCalibration {
 public:
  PowerCalibration(const CalibrationWindows& windows, const PolcaConfig& base, const CalibrationOptions& options);
  Result<CalibrationResult> Run();

 private:
  struct Shape {
    double tokens_for_peak;
    double prompt_exponent;
    double token_exponent;
  };
  struct Levels {
    double idle, prompt_small, prompt_large, token_batch1, token_full;
  };

  struct OneSecond {
    double measured_w, modelled_w, span_s;
  };

  Status Split();
  Status CheckSupport();
  Status FitShapeAndLevels();
  void FitNonGpu();
  void Evaluate(const std::vector<double>& predicted);
  Result<CalibrationResult> FinishBusy(const BusyPowerFitResult& busy, const std::string& phase_refusal);
  // server.gpus and the non-GPU part, as fitted or kept, into the parameters.
  void AddServerParameters();
  // The result, or the refusal of a fitted model the config's rules do not hold, with its notes.
  Result<CalibrationResult> Validated() const;
  std::vector<OneSecond> OneSecondBlocks(const std::vector<double>& predicted, bool fit_part) const;
  double FitPartOneSecondError(const std::vector<double>& predicted) const;

  // Least-squares levels within their bounds and the residual sum of squares for a shape (over the
  // fit windows); the bounds the answer rests on into `bound_notes`.
  bool SolveLevels(const Shape& shape, Levels& levels, double& rss,
                   std::vector<std::string>* bound_notes = nullptr) const;
  // Whether a fit-part window enters the fit: a steady clock, every prefill's tokens its own (not
  // a share of several prefills'), phase times the load determines, and load the timing fits in it.
  bool Fits(size_t window) const;
  double PredictW(size_t window, const Shape& shape, const Levels& levels) const;
  void Features(size_t window, const Shape& shape, double f[5]) const;

  const CalibrationWindows& data_;
  PolcaConfig base_;
  CalibrationOptions options_;
  std::vector<WindowPhaseTimes> phases_;
  std::vector<double> log_clock_ratio_;
  std::vector<bool> in_fit_;  // per window: in the fit part (each run's first part), else held back
  bool fit_exponents_ = false;
  double max_prefill_tokens_ = 0;
  Shape shape_{};
  Levels levels_{};
  CalibrationResult result_;
};

// PowerCalibration(windows, base, options).Run().
Result<CalibrationResult> CalibratePowerModel(const CalibrationWindows& windows, const PolcaConfig& base,
                                              const CalibrationOptions& options);

}  // namespace wattcut::polca
