#include "wattcut/polca/power_calibration.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "wattcut/base/bounded_least_squares.h"
#include "wattcut/base/fixed_decimals.h"
#include "wattcut/polca/busy_power_fit.h"
#include "wattcut/polca/inference_power_model.h"

namespace wattcut::polca {
namespace {

constexpr int kLevels = 5;
constexpr double kMinExponent = 0.1, kMaxExponent = 4.0;
constexpr double kMaxLevelTdp = 1.3;
// A 1 s block of windows closes at 0.9 s: four 250 ms windows, or one 1 s scrape that came 20 ms
// early, are a second.
constexpr double kOneSecondBlockS = 0.9;

// Golden-section search of a function of one variable on [lo, hi].
template <typename F>
double GoldenMin(F f, double lo, double hi, int iterations) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = lo, b = hi;
  double c = b - g * (b - a), d = a + g * (b - a);
  double fc = f(c), fd = f(d);
  for (int i = 0; i < iterations; ++i) {
    if (fc < fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = f(d);
    }
  }
  return fc < fd ? c : d;
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto i = static_cast<size_t>(pos);
  const double frac = pos - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] * (1 - frac) + v[i + 1] * frac : v[i];
}

WindowErrorStats Stats(const std::vector<PredictedWindow>& w, double tdp_w, int kind) {
  WindowErrorStats s;
  std::vector<double> abs;
  double sum_abs = 0, sum_signed = 0;
  for (const PredictedWindow& p : w) {
    if (kind >= 0 && static_cast<int>(p.kind) != kind) continue;
    const double e = p.predicted_w - p.measured_w;
    abs.push_back(std::abs(e));
    sum_abs += std::abs(e);
    sum_signed += e;
    s.max_abs_w = std::max(s.max_abs_w, std::abs(e));
  }
  s.windows = static_cast<int>(abs.size());
  if (abs.empty()) return s;
  s.mean_abs_w = sum_abs / static_cast<double>(abs.size());
  s.mean_signed_w = sum_signed / static_cast<double>(abs.size());
  s.p99_abs_w = Quantile(abs, 0.99);
  s.mean_abs_tdp = s.mean_abs_w / tdp_w;
  s.p99_abs_tdp = s.p99_abs_w / tdp_w;
  return s;
}

std::string Mhz(double v) { return FixedDecimals(v, 0) + " MHz"; }

}  // namespace

PowerCalibration::PowerCalibration(const CalibrationWindows& windows, const PolcaConfig& base,
                                   const CalibrationOptions& options)
    : data_(windows), base_(base), options_(options) {}

bool PowerCalibration::Fits(size_t k) const {
  return data_.windows[k].clock_steady && phases_[k].tokens_known() && phases_[k].times_known && !phases_[k].overfull;
}

void PowerCalibration::Features(size_t k, const Shape& shape, double f[5]) const {
  const WindowPhaseTimes& p = phases_[k];
  const double wp = std::exp(shape.prompt_exponent * log_clock_ratio_[k]);
  const double wt = std::exp(shape.token_exponent * log_clock_ratio_[k]);
  double idle = p.idle_s + p.decode_s * (1 - wt), small = 0, large = 0;
  for (const PrefillPiece& piece : p.prefill) {
    const double x = std::min(1.0, piece.tokens / shape.tokens_for_peak);
    idle += piece.seconds * (1 - wp);
    small += piece.seconds * wp * (1 - x);
    large += piece.seconds * wp * x;
  }
  const int max_batch = base_.service.max_batch;
  const double y = max_batch <= 1 ? 1.0 : std::clamp((p.decode_batch - 1) / (max_batch - 1), 0.0, 1.0);
  const double length = data_.windows[k].length_s();
  f[0] = idle / length;
  f[1] = small / length;
  f[2] = large / length;
  f[3] = p.decode_s * wt * (1 - y) / length;
  f[4] = p.decode_s * wt * y / length;
}

double PowerCalibration::PredictW(size_t k, const Shape& shape, const Levels& l) const {
  double f[5];
  Features(k, shape, f);
  return f[0] * l.idle + f[1] * l.prompt_small + f[2] * l.prompt_large + f[3] * l.token_batch1 + f[4] * l.token_full;
}

bool PowerCalibration::SolveLevels(const Shape& shape, Levels& levels, double& rss,
                                   std::vector<std::string>* bound_notes) const {
  BoundedLeastSquares ls(kLevels);
  for (size_t k = 0; k < data_.windows.size(); ++k) {
    if (!in_fit_[k] || !Fits(k)) continue;
    double f[kLevels];
    Features(k, shape, f);
    ls.Add(f, data_.windows[k].gpu_w);
  }
  if (ls.observations() < kLevels) return false;
  // Bounded by physics: idle within [5 %, 60 %] of TDP, every other level within [0, 130 %] of it
  // (an A100's instant power reaches about 125 % of TDP in a large prefill).
  const double tdp = base_.gpu.tdp_w;
  const std::vector<double> lo = {0.05 * tdp, 0, 0, 0, 0};
  const std::vector<double> hi = {0.6 * tdp, kMaxLevelTdp * tdp, kMaxLevelTdp * tdp, kMaxLevelTdp * tdp,
                                  kMaxLevelTdp * tdp};
  const BoundedLeastSquares::Answer a = ls.Solve(lo, hi);
  if (a.x.empty()) return false;
  levels = {a.x[0], a.x[1], a.x[2], a.x[3], a.x[4]};
  rss = a.residual_sum_of_squares;
  if (bound_notes != nullptr) {
    static constexpr const char* kNames[] = {"gpu.idle_w", "gpu.prompt_w_small", "gpu.prompt_w_large",
                                             "gpu.token_w_batch1", "gpu.token_w_full_batch"};
    for (int i = 0; i < kLevels; ++i) {
      if (!a.at_bound[i]) continue;
      const bool upper = a.x[i] >= hi[i];
      bound_notes->push_back(std::string(kNames[i]) + " is held at its " + (upper ? "upper" : "lower") + " bound (" +
                             FixedDecimals(a.x[i], 1) + " W): the data pulls it " +
                             (upper ? "beyond what a GPU can draw" : "below what a GPU can draw"));
    }
  }
  return true;
}

Status PowerCalibration::Split() {
  const auto& w = data_.windows;
  if (!(options_.hold_back_fraction > 0 && options_.hold_back_fraction <= 0.9)) {
    return Error{"--hold-back: expected a share of the run in (0 %, 90 %]"};
  }
  // Each run is split on its own: the first (1 - hold_back) of its time fits.
  in_fit_.assign(w.size(), false);
  size_t fit = 0;
  const std::vector<size_t>& starts = data_.run_starts;
  for (size_t r = 0; r < starts.size(); ++r) {
    const size_t begin = starts[r], end = r + 1 < starts.size() ? starts[r + 1] : w.size();
    if (begin >= end) continue;
    const double from = w[begin].start_s, to = w[end - 1].end_s;
    const double cut = from + (to - from) * (1 - options_.hold_back_fraction);
    size_t k = begin;
    for (; k < end && w[k].end_s <= cut + 1e-9; ++k) in_fit_[k] = true;
    if (k == begin || k == end) {
      return Error{std::string(starts.size() > 1 ? "run " + std::to_string(r + 1) + ": " : "") +
                   "the run is too short to split into a fit part and a held-back part"};
    }
    fit += k - begin;
    result_.fit_s += w[k - 1].end_s - from;
    result_.holdout_s += to - w[k].start_s;
    if (r == 0) {
      result_.fit_from_s = from;
      result_.fit_to_s = w[k - 1].end_s;
      result_.holdout_from_s = w[k].start_s;
      result_.holdout_to_s = to;
    }
  }
  result_.fit_windows = static_cast<int>(fit);
  return Status{};
}

Status PowerCalibration::CheckSupport() {
  const auto& w = data_.windows;
  double fit_s = 0, idle_s = 0, prefill_s = 0, decode_s = 0;
  int overfull = 0;
  std::map<long, std::pair<double, int>> busy_by_clock;  // clock (15 MHz bins) -> busy s, windows
  size_t fit_windows = 0;
  for (size_t k = 0; k < w.size(); ++k) {
    if (!in_fit_[k]) continue;
    ++fit_windows;
    fit_s += w[k].length_s();
    if (w[k].idle) idle_s += w[k].length_s();
    double p = 0;
    for (const PrefillPiece& piece : phases_[k].prefill) {
      p += piece.seconds;
      max_prefill_tokens_ = std::max(max_prefill_tokens_, piece.tokens);
    }
    prefill_s += p;
    decode_s += phases_[k].decode_s;
    if (phases_[k].overfull) ++overfull;
    if (w[k].clock_steady && !std::isnan(w[k].freq_mhz)) {
      auto& entry = busy_by_clock[std::lround(w[k].freq_mhz / 15)];
      entry.first += p + phases_[k].decode_s;
      entry.second += 1;
    }
  }
  result_.overfull_share = static_cast<double>(overfull) / static_cast<double>(std::max<size_t>(1, fit_windows));
  const std::string part = "the fit part (" + FixedDecimals(fit_s, 0) + " s of windows)";
  if (fit_s < options_.min_fit_s) {
    return Error{"too short: " + part + " needs at least " + FixedDecimals(options_.min_fit_s, 0) +
                 " s; record longer or hold back less (--hold-back)"};
  }
  if (idle_s < options_.min_idle_s) {
    return Error{"no idle period: " + part + " has " + FixedDecimals(idle_s, 0) + " s with nothing running, at least " +
                 FixedDecimals(options_.min_idle_s, 0) +
                 " s are needed to measure idle power; record a quiet stretch (drain the server for a minute)"};
  }
  if (prefill_s < options_.min_prefill_s) {
    return Error{"no prefill: " + part + " has " + FixedDecimals(prefill_s, 1) + " s of prefill, at least " +
                 FixedDecimals(options_.min_prefill_s, 0) + " s are needed (does the load file hold " +
                 "vllm:prompt_tokens_total?)"};
  }
  if (decode_s < options_.min_decode_s) {
    return Error{"no decode: " + part + " has " + FixedDecimals(decode_s, 1) + " s of decoding, at least " +
                 FixedDecimals(options_.min_decode_s, 0) + " s are needed"};
  }
  for (const auto& [bin, entry] : busy_by_clock) {
    if (entry.first >= options_.min_busy_s_per_clock) result_.clocks_mhz.push_back(static_cast<double>(bin) * 15);
  }
  std::sort(result_.clocks_mhz.rbegin(), result_.clocks_mhz.rend());
  fit_exponents_ = result_.clocks_mhz.size() >= 2;
  if (!data_.has_clock) {
    result_.notes.push_back("the power file has no SM clock: every window is taken at the maximum clock (" +
                            Mhz(base_.gpu.max_freq_mhz) + ")");
  }
  if (result_.overfull_share > 0.02) {
    result_.notes.push_back(
        FixedDecimals(100 * result_.overfull_share, 1) +
        " % of the fit windows hold more prefill and decode work than the config's service timing fits in them: "
        "service.* may not be the served model's (calibrate fits power, not speed)");
  }
  return Status{};
}

Status PowerCalibration::FitShapeAndLevels() {
  const double max_tokens = std::max(1.0, max_prefill_tokens_);
  const double lo_tokens = std::min(64.0, max_tokens);
  Shape best{base_.gpu.prompt_tokens_for_peak, base_.gpu.prompt_power_freq_exponent,
             base_.gpu.token_power_freq_exponent};
  best.tokens_for_peak = std::clamp(best.tokens_for_peak, lo_tokens, max_tokens);
  auto rss_of = [&](const Shape& s) {
    Levels l{};
    double rss = 0;
    return SolveLevels(s, l, rss) ? rss : std::numeric_limits<double>::infinity();
  };
  double best_rss = rss_of(best);
  // A log grid of the tokens at peak, each with the exponents refined.
  const int grid = 20;
  // One exponent of `s` set to its best value with the rest of `s` held.
  auto refine = [&](Shape& s, double Shape::*exponent) {
    s.*exponent = GoldenMin(
        [&](double e) {
          Shape t = s;
          t.*exponent = e;
          return rss_of(t);
        },
        kMinExponent, kMaxExponent, 30);
  };
  auto refine_exponents = [&](Shape& s) {
    if (!fit_exponents_) return;
    for (int pass = 0; pass < 2; ++pass) {
      refine(s, &Shape::prompt_exponent);
      refine(s, &Shape::token_exponent);
    }
  };
  for (int i = 0; i < grid; ++i) {
    Shape s = best;
    s.tokens_for_peak = lo_tokens * std::pow(max_tokens / lo_tokens, static_cast<double>(i) / (grid - 1));
    refine_exponents(s);
    const double rss = rss_of(s);
    if (rss < best_rss) {
      best_rss = rss;
      best = s;
    }
  }
  // Golden-section passes over each shape parameter in turn, around the best grid point.
  for (int pass = 0; pass < 3; ++pass) {
    const double step = std::pow(max_tokens / lo_tokens, 1.0 / (grid - 1));
    const double lo = std::max(lo_tokens, best.tokens_for_peak / step),
                 hi = std::min(max_tokens, best.tokens_for_peak * step);
    if (hi > lo) {
      Shape s = best;
      s.tokens_for_peak = std::exp(GoldenMin(
          [&](double log_t) {
            Shape t = best;
            t.tokens_for_peak = std::exp(log_t);
            return rss_of(t);
          },
          std::log(lo), std::log(hi), 30));
      if (const double rss = rss_of(s); rss < best_rss) {
        best = s;
        best_rss = rss;
      }
    }
    Shape s = best;
    refine_exponents(s);
    if (rss_of(s) < best_rss) {
      best = s;
      best_rss = rss_of(s);
    }
  }
  double rss = 0;
  if (!SolveLevels(best, levels_, rss)) {
    return Error{"the fit is singular: the load never separates idle, prefill and decode power"};
  }
  shape_ = best;
  int n = 0;
  for (size_t k = 0; k < data_.windows.size(); ++k) n += in_fit_[k] && Fits(k) ? 1 : 0;
  result_.fit_rms_w = std::sqrt(rss / std::max(1, n));
  return Status{};
}

void PowerCalibration::FitNonGpu() {
  if (!data_.has_server_power) return;
  // Blocks of at least 30 s of consecutive windows: one window's GPU reading carries the sampling
  // error of a few samples (and a BMC's average lags), which would flatten the line fitted through
  // single windows; over 30 s both average out while the load still varies from block to block.
  std::vector<std::pair<double, double>> blocks;  // (GPUs' watts, server watts)
  double gpu_ws = 0, server_ws = 0, span = 0;
  for (size_t k = 0; k < data_.windows.size(); ++k) {
    const CalibrationWindow& w = data_.windows[k];
    if (!in_fit_[k] || w.server_w < 0) continue;
    gpu_ws += w.gpu_w * data_.gpus * w.length_s();
    server_ws += w.server_w * w.length_s();
    span += w.length_s();
    if (span >= 30) {
      blocks.push_back({gpu_ws / span, server_ws / span});
      gpu_ws = server_ws = span = 0;
    }
  }
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : blocks) {
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double var = n > 1 ? sxx / n - (sx / n) * (sx / n) : 0;
  if (n < 10 || var < 25.0 * data_.gpus * data_.gpus) {
    result_.notes.push_back(
        "server power was recorded but too briefly, or its GPUs' power hardly varied: the non-GPU "
        "part is the base config's");
    return;
  }
  const double slope = (sxy / n - (sx / n) * (sy / n)) / var;
  const double intercept = sy / n - slope * sx / n;
  result_.config.server.other_idle_w = std::max(0.0, intercept);
  result_.config.server.other_w_per_gpu_w = std::max(0.0, slope - 1);
}

std::vector<PowerCalibration::OneSecond> PowerCalibration::OneSecondBlocks(const std::vector<double>& predicted,
                                                                           bool fit_part) const {
  // Consecutive windows of one part, adjacent in time, gathered until they span a second.
  std::vector<OneSecond> out;
  double span = 0, measured = 0, modelled = 0, last_end = -1;
  for (size_t k = 0; k < data_.windows.size(); ++k) {
    const CalibrationWindow& w = data_.windows[k];
    if (in_fit_[k] != fit_part || std::abs(w.start_s - last_end) > 1e-6) span = measured = modelled = 0;
    last_end = w.end_s;
    if (in_fit_[k] != fit_part) continue;
    span += w.length_s();
    measured += w.gpu_w * w.length_s();
    modelled += predicted[k] * w.length_s();
    if (span >= kOneSecondBlockS) {
      out.push_back({measured / span, modelled / span, span});
      span = measured = modelled = 0;
    }
  }
  return out;
}

double PowerCalibration::FitPartOneSecondError(const std::vector<double>& predicted) const {
  double sum = 0;
  const std::vector<OneSecond> blocks = OneSecondBlocks(predicted, true);
  for (const OneSecond& b : blocks) sum += std::abs(b.modelled_w - b.measured_w);
  return blocks.empty() ? std::numeric_limits<double>::infinity() : sum / static_cast<double>(blocks.size());
}

void PowerCalibration::Evaluate(const std::vector<double>& predicted) {
  const double tdp = base_.gpu.tdp_w;
  result_.fit.clear();
  result_.held_back.clear();
  result_.holdout_minutes = 0;
  result_.energy_per_minute_mean_abs = result_.energy_per_minute_max_abs = 0;
  auto kind_of = [&](size_t k) {
    const CalibrationWindow& w = data_.windows[k];
    if (w.idle) return WindowKind::kIdle;
    if (!phases_[k].prefill.empty()) return WindowKind::kPrefill;
    return WindowKind::kDecode;
  };
  for (size_t k = 0; k < data_.windows.size(); ++k) {
    const CalibrationWindow& w = data_.windows[k];
    PredictedWindow p{w.end_s, w.length_s(), w.gpu_w, predicted[k], kind_of(k)};
    (in_fit_[k] ? result_.fit : result_.held_back).push_back(p);
  }
  result_.holdout = Stats(result_.held_back, tdp, -1);
  result_.holdout_idle = Stats(result_.held_back, tdp, static_cast<int>(WindowKind::kIdle));
  result_.holdout_prefill = Stats(result_.held_back, tdp, static_cast<int>(WindowKind::kPrefill));
  result_.holdout_decode = Stats(result_.held_back, tdp, static_cast<int>(WindowKind::kDecode));
  std::vector<PredictedWindow> seconds;
  for (const OneSecond& b : OneSecondBlocks(predicted, false)) {
    seconds.push_back({0, b.span_s, b.measured_w, b.modelled_w, WindowKind::kDecode});
  }
  result_.holdout_1s = Stats(seconds, tdp, -1);
  // Energy per minute: consecutive held-back windows in stretches of 60 s.
  double measured = 0, modelled = 0, span = 0, all_measured = 0, all_modelled = 0, sum_abs = 0;
  for (const PredictedWindow& p : result_.held_back) {
    measured += p.measured_w * p.length_s;
    modelled += p.predicted_w * p.length_s;
    span += p.length_s;
    if (span >= 60 - 1e-6) {
      const double e = measured > 0 ? std::abs(modelled - measured) / measured : 0;
      sum_abs += e;
      result_.energy_per_minute_max_abs = std::max(result_.energy_per_minute_max_abs, e);
      ++result_.holdout_minutes;
      all_measured += measured;
      all_modelled += modelled;
      measured = modelled = span = 0;
    }
  }
  all_measured += measured;
  all_modelled += modelled;
  if (result_.holdout_minutes > 0) result_.energy_per_minute_mean_abs = sum_abs / result_.holdout_minutes;
  if (all_measured > 0) result_.holdout_energy_error = (all_modelled - all_measured) / all_measured;
}

Result<CalibrationResult> PowerCalibration::Run() {
  if (data_.windows.empty()) return Error{"no windows to fit"};
  result_ = CalibrationResult{};
  result_.config = base_;
  // Each run's phases on their own (a prefill does not straddle two runs).
  phases_.clear();
  for (size_t r = 0; r < data_.run_starts.size(); ++r) {
    const size_t begin = data_.run_starts[r];
    const size_t end = r + 1 < data_.run_starts.size() ? data_.run_starts[r + 1] : data_.windows.size();
    const std::vector<CalibrationWindow> run(data_.windows.begin() + static_cast<std::ptrdiff_t>(begin),
                                             data_.windows.begin() + static_cast<std::ptrdiff_t>(end));
    for (WindowPhaseTimes& p : ReconstructPhaseTimes(run, base_)) phases_.push_back(std::move(p));
  }
  log_clock_ratio_.resize(data_.windows.size());
  for (size_t k = 0; k < data_.windows.size(); ++k) {
    const double f = data_.windows[k].freq_mhz;
    log_clock_ratio_[k] =
        std::isnan(f)
            ? 0.0
            : std::log(std::clamp(f, base_.gpu.min_freq_mhz, base_.gpu.max_freq_mhz) / base_.gpu.max_freq_mhz);
  }
  if (Status s = Split(); !s.ok()) return s.error();

  // The phase model, where the data supports it (the served model's timing, long runs).
  std::string phase_refusal;
  std::vector<double> phase_predicted;
  std::vector<std::string> phase_bounds;
  if (Status s = CheckSupport(); !s.ok()) {
    phase_refusal = s.error().message;
  } else if (Status f = FitShapeAndLevels(); !f.ok()) {
    phase_refusal = f.error().message;
  } else {
    // The model written out is the one evaluated: values rounded as calibrated.conf holds them.
    auto round_to = [](double v, double unit) { return std::round(v / unit) * unit; };
    levels_ = {round_to(levels_.idle, 0.1), round_to(levels_.prompt_small, 0.1), round_to(levels_.prompt_large, 0.1),
               round_to(levels_.token_batch1, 0.1), round_to(levels_.token_full, 0.1)};
    shape_ = {std::round(shape_.tokens_for_peak), round_to(shape_.prompt_exponent, 0.001),
              round_to(shape_.token_exponent, 0.001)};
    Levels unrounded{};
    double rss = 0;
    SolveLevels(shape_, unrounded, rss, &phase_bounds);
    phase_predicted.resize(data_.windows.size());
    for (size_t k = 0; k < data_.windows.size(); ++k) phase_predicted[k] = PredictW(k, shape_, levels_);
  }
  // The engine-state model (busy_power_fit.h), which needs no timing.
  BusyPowerFit busy_fit(data_, in_fit_, base_, options_.sensor_average_s, options_.busy);
  Result<BusyPowerFitResult> busy = busy_fit.Run();
  if (!phase_refusal.empty() && !busy.ok()) {
    std::string notes;
    for (const std::string& n : result_.notes) notes += "; " + n;
    return Error{busy.error().message + " (and the phase model: " + phase_refusal + ")" + notes};
  }
  // The model whose 1 s error over the fit part is the smaller: the held-back part does not choose.
  const bool use_phase = phase_refusal.empty() && (!busy.ok() || FitPartOneSecondError(phase_predicted) <=
                                                                     FitPartOneSecondError(busy->predicted_w));
  FitNonGpu();
  auto round_to = [](double v, double unit) { return std::round(v / unit) * unit; };
  result_.config.server.other_idle_w = round_to(result_.config.server.other_idle_w, 1);
  result_.config.server.other_w_per_gpu_w = round_to(result_.config.server.other_w_per_gpu_w, 0.001);
  if (!use_phase) return FinishBusy(*busy, phase_refusal);
  result_.model = "phase";
  for (const std::string& n : phase_bounds) result_.notes.push_back(n);
  Evaluate(phase_predicted);

  GpuSpec& g = result_.config.gpu;
  const GpuSpec& b = base_.gpu;
  g.idle_w = levels_.idle;
  g.prompt_w_small = levels_.prompt_small;
  g.prompt_w_large = levels_.prompt_large;
  g.prompt_tokens_for_peak = shape_.tokens_for_peak;
  g.token_w_batch1 = levels_.token_batch1;
  g.token_w_full_batch = levels_.token_full;
  g.prompt_power_freq_exponent = shape_.prompt_exponent;
  g.token_power_freq_exponent = shape_.token_exponent;
  result_.config.server.gpus = data_.gpus;
  const bool rising = shape_.tokens_for_peak >= 0.97 * max_prefill_tokens_;
  const std::string clocks_note =
      fit_exponents_ ? "" : "not measured: the data holds one SM clock with enough busy time; the base config's";
  auto add = [&](const std::string& key, double v, double base, bool measured, const std::string& note) {
    result_.parameters.push_back({key, v, base, measured, note});
  };
  add("gpu.idle_w", g.idle_w, b.idle_w, true, "");
  add("gpu.prompt_w_small", g.prompt_w_small, b.prompt_w_small, true, "");
  add("gpu.prompt_w_large", g.prompt_w_large, b.prompt_w_large, true,
      rising ? "prompt power still rising at the largest prefill seen: this is its power there" : "");
  add("gpu.prompt_tokens_for_peak", g.prompt_tokens_for_peak, b.prompt_tokens_for_peak, true,
      rising
          ? "the largest prefill seen (" + FixedDecimals(max_prefill_tokens_, 0) + " tokens): no saturation in the data"
          : "");
  add("gpu.token_w_batch1", g.token_w_batch1, b.token_w_batch1, true, "");
  add("gpu.token_w_full_batch", g.token_w_full_batch, b.token_w_full_batch, true, "");
  add("gpu.prompt_power_freq_exponent", g.prompt_power_freq_exponent, b.prompt_power_freq_exponent, fit_exponents_,
      clocks_note);
  add("gpu.token_power_freq_exponent", g.token_power_freq_exponent, b.token_power_freq_exponent, fit_exponents_,
      clocks_note);
  AddServerParameters();
  if (!fit_exponents_) {
    result_.notes.push_back(
        "the clock dependence was not measured: lock the GPUs to two or more SM clocks for a few "
        "minutes each while recording (nvidia-smi -lgc) to measure it");
  }
  Result<CalibrationResult> phase = Validated();
  if (phase.ok() || !busy.ok()) return phase;
  // The phase levels break the config's rules (a small prefill drawing more than a large one,
  // say): the engine-state model answers instead, and says why.
  result_.parameters.clear();
  result_.config.gpu = base_.gpu;
  return FinishBusy(*busy, "its levels are not a consistent config: " +
                               phase.error().message.substr(0, phase.error().message.find(';')));
}

void PowerCalibration::AddServerParameters() {
  auto add = [&](const std::string& key, double v, double base, bool measured, const std::string& note) {
    result_.parameters.push_back({key, v, base, measured, note});
  };
  add("server.gpus", data_.gpus, base_.server.gpus, true, "GPUs in the power file");
  const bool non_gpu = result_.config.server.other_idle_w != base_.server.other_idle_w ||
                       result_.config.server.other_w_per_gpu_w != base_.server.other_w_per_gpu_w;
  const std::string non_gpu_note =
      non_gpu ? ""
              : (data_.has_server_power ? "not measured: see notes"
                                        : "not measured: no server-level power in the data; the base config's");
  add("server.other_idle_w", result_.config.server.other_idle_w, base_.server.other_idle_w, non_gpu, non_gpu_note);
  add("server.other_w_per_gpu_w", result_.config.server.other_w_per_gpu_w, base_.server.other_w_per_gpu_w, non_gpu,
      non_gpu_note);
}

Result<CalibrationResult> PowerCalibration::Validated() const {
  if (Status valid = Validate(result_.config); !valid.ok()) {
    std::string notes;
    for (const std::string& n : result_.notes) notes += "; " + n;
    return Error{"the fitted model is not a consistent config (" + valid.error().message +
                 "): the data does not support this model" + notes};
  }
  return result_;
}

Result<CalibrationResult> PowerCalibration::FinishBusy(const BusyPowerFitResult& busy,
                                                       const std::string& phase_refusal) {
  result_.model = "busy";
  result_.busy = busy.levels;
  result_.prefill_s_per_token = busy.prefill_s_per_token;
  result_.fit_rms_w = busy.fit_rms_w;
  Evaluate(busy.predicted_w);
  result_.notes.push_back(
      "fitted the engine-state model (idle, a busy step while the engine has work, energy per prompt and per "
      "generated token, power per running request)" +
      (phase_refusal.empty() ? std::string(": its 1 s error over the fit part is below the phase model's")
                             : ": the phase model could not be fitted (" + phase_refusal + ")"));
  for (const std::string& n : busy.bound_notes) result_.notes.push_back(n);
  // Into the simulator's phase levels at the base config's timing (calibrate fits power, not
  // speed), so that a simulated server's energy per unit of work is the calibrated one's: a prefill
  // of n tokens draws the busy floor plus its prompt energy over its duration (a large one, a long
  // step, the stalled power too); a decode iteration at batch b, the floor plus b - 1 requests'
  // power, b tokens' energy and one step's.
  const BusyPowerLevels& l = busy.levels;
  const InferencePowerModel timing(base_);
  const double tdp = base_.gpu.tdp_w, ceiling = kMaxLevelTdp * tdp;
  const double floor_w = l.idle_w + l.busy_step_w;
  const int max_batch = std::max(1, base_.service.max_batch);
  const double peak_tokens = base_.gpu.prompt_tokens_for_peak;
  auto level = [&](double w) { return std::round(std::min(w, ceiling) * 10) / 10; };
  GpuSpec& g = result_.config.gpu;
  const GpuSpec& b = base_.gpu;
  g.idle_w = std::round(l.idle_w * 10) / 10;
  g.prompt_w_small = level(floor_w);
  // A large prefill is a long step: it draws the stalled power too.
  g.prompt_w_large = level(floor_w + l.w_while_stalled +
                           (l.prompt_j_per_token + l.prompt_j_per_token_squared * peak_tokens) * peak_tokens /
                               timing.PromptSeconds(peak_tokens));
  g.token_w_batch1 =
      level(floor_w + (l.generation_j_per_token + l.j_per_engine_step) / timing.TokenIterationSeconds(1));
  g.token_w_full_batch =
      level(floor_w + l.w_per_running_request * (max_batch - 1) +
            (l.generation_j_per_token * max_batch + l.j_per_engine_step) / timing.TokenIterationSeconds(max_batch));
  // The simulator's decode power does not fall with the batch (inference_power_model.h): where the
  // engine-step energy spread over a full batch's longer iterations would make it, it is held.
  if (g.token_w_full_batch < g.token_w_batch1) {
    result_.notes.push_back("gpu.token_w_full_batch is held at gpu.token_w_batch1 (" +
                            FixedDecimals(g.token_w_batch1, 1) +
                            " W): at the base config's timing the fitted terms would make a full batch draw less");
    g.token_w_full_batch = g.token_w_batch1;
  }
  if (busy.clock_exponent_measured) {
    g.prompt_power_freq_exponent = g.token_power_freq_exponent = std::round(busy.clock_exponent * 1000) / 1000;
  }
  result_.config.server.gpus = data_.gpus;
  std::string unmeasured_idle;
  for (const std::string& u : busy.unmeasured) {
    result_.notes.push_back("not measured: " + u);
    if (u.rfind("gpu.idle_w", 0) == 0) unmeasured_idle = "not measured: too little idle; the base config's";
  }
  const std::string derived = "from the engine-state fit at the base config's timing (" + base_.service.model + ")";
  auto add = [&](const std::string& key, double v, double base, bool measured, const std::string& note) {
    result_.parameters.push_back({key, v, base, measured, note});
  };
  add("gpu.idle_w", g.idle_w, b.idle_w, busy.idle_measured, unmeasured_idle);
  add("gpu.prompt_w_small", g.prompt_w_small, b.prompt_w_small, true, "the busy floor: idle + busy step");
  add("gpu.prompt_w_large", g.prompt_w_large, b.prompt_w_large, true, derived);
  add("gpu.prompt_tokens_for_peak", g.prompt_tokens_for_peak, b.prompt_tokens_for_peak, false, "the base config's");
  add("gpu.token_w_batch1", g.token_w_batch1, b.token_w_batch1, true, derived);
  add("gpu.token_w_full_batch", g.token_w_full_batch, b.token_w_full_batch, true, derived);
  const std::string one_clock = "not measured: the data holds one SM clock with enough busy time; the base config's";
  add("gpu.prompt_power_freq_exponent", g.prompt_power_freq_exponent, b.prompt_power_freq_exponent,
      busy.clock_exponent_measured, busy.clock_exponent_measured ? "the engine-state model's one exponent" : one_clock);
  add("gpu.token_power_freq_exponent", g.token_power_freq_exponent, b.token_power_freq_exponent,
      busy.clock_exponent_measured, busy.clock_exponent_measured ? "the engine-state model's one exponent" : one_clock);
  AddServerParameters();
  return Validated();
}

Result<CalibrationResult> CalibratePowerModel(const CalibrationWindows& windows, const PolcaConfig& base,
                                              const CalibrationOptions& options) {
  return PowerCalibration(windows, base, options).Run();
}

}  // namespace wattcut::polca
