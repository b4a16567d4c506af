#include "wattcut/polca/busy_power_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "wattcut/base/bounded_least_squares.h"
#include "wattcut/base/fixed_decimals.h"

namespace wattcut::polca {
namespace {

// The spreads of a prefill's prompt tokens searched, seconds per token: none (the window of the
// first token) to 1.28 ms a token (a 20,000-token prompt over 26 s).
constexpr double kSpreads[] = {0, 1e-5, 2e-5, 4e-5, 8e-5, 1.6e-4, 3.2e-4, 6.4e-4, 1.28e-3};

// A window is stalled when its steps take under this share of it at the decode step time; a run of
// stalled windows of at least kMinStalledRunS before a prompt count is a long prefill measured, and
// kMinMeasuredPrefills of them fix the spread.
constexpr double kStalledShare = 0.25;
constexpr double kMinStalledRunS = 0.75;
constexpr int kMinMeasuredPrefills = 3;

// Where in its window a prefill ended is unknown: its spread is averaged over this many points.
constexpr int kEndPoints = 8;

// The clock exponents searched when the data holds two clocks or more: the above-idle terms scale
// as (f / f_max)^exponent, as the phase model's do (inference_power_model.h).
constexpr double kExponents[] = {0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0};

constexpr const char* kTermNames[] = {"idle power",
                                      "busy step",
                                      "prompt energy",
                                      "generation energy",
                                      "power per running request",
                                      "prompt energy per token squared",
                                      "energy per engine step",
                                      "power while a long step runs"};

}  // namespace

BusyPowerFit::BusyPowerFit(const CalibrationWindows& windows, const std::vector<bool>& in_fit, const PolcaConfig& base,
                           double sensor_average_s, const BusyFitOptions& options)
    : data_(windows), in_fit_(in_fit), base_(base), sensor_average_s_(sensor_average_s), options_(options) {}

Status BusyPowerFit::CheckSupport() {
  double idle_s = 0, busy_s = 0;
  for (size_t k = 0; k < data_.windows.size(); ++k) {
    if (!in_fit_[k]) continue;
    const CalibrationWindow& w = data_.windows[k];
    if (w.idle) idle_s += w.length_s();
    busy_s += w.busy_share * w.length_s();
  }
  if (busy_s < options_.min_busy_s) {
    return Error{"too little load: the fit part has " + FixedDecimals(busy_s, 1) +
                 " s with the engine busy, at least " + FixedDecimals(options_.min_busy_s, 0) +
                 " s are needed to measure the busy step and the load terms; record while the server serves"};
  }
  idle_measured_ = idle_s >= options_.min_idle_s;
  // Clocks (15 MHz bins) with a minute of busy time each: two or more measure the clock exponent.
  std::map<long, double> busy_by_clock;
  for (size_t k = 0; k < data_.windows.size(); ++k) {
    const CalibrationWindow& w = data_.windows[k];
    if (in_fit_[k] && w.clock_steady && !std::isnan(w.freq_mhz)) {
      busy_by_clock[std::lround(w.freq_mhz / 15)] += w.busy_share * w.length_s();
    }
  }
  int clocks = 0;
  for (const auto& [bin, seconds] : busy_by_clock) clocks += seconds >= 60 ? 1 : 0;
  fit_exponent_ = clocks >= 2;
  // The engine's step time when it only decodes: the median, over fit windows busy at both ends
  // with steps and no prompt tokens, of the window's length per step. 0: the load has no steps.
  std::vector<double> step_s;
  for (size_t k = 0; k < data_.windows.size(); ++k) {
    const CalibrationWindow& w = data_.windows[k];
    if (in_fit_[k] && w.busy_share >= 1 && w.iterations > 0 && w.prompt_tokens <= 0) {
      step_s.push_back(w.length_s() / w.iterations);
    }
  }
  if (step_s.size() >= 20) {
    std::nth_element(step_s.begin(), step_s.begin() + static_cast<std::ptrdiff_t>(step_s.size() / 2), step_s.end());
    decode_step_s_ = step_s[step_s.size() / 2];
  }
  MeasureSpread();
  if (!idle_measured_) {
    result_.unmeasured.push_back("gpu.idle_w: the fit part has " + FixedDecimals(idle_s, 1) +
                                 " s with nothing running, at least " + FixedDecimals(options_.min_idle_s, 0) +
                                 " s are needed; the base config's (record a quiet stretch to measure it)");
  }
  return Status::Ok();
}

void BusyPowerFit::MeasureSpread() {
  if (decode_step_s_ <= 0) return;
  // A long prefill where something else was running: the windows before its prompt count are busy
  // with almost no steps (a step is counted when it ends). Its length is that stalled run's.
  auto stalled = [&](const CalibrationWindow& w) {
    return w.busy_share >= 1 && w.iterations * decode_step_s_ < kStalledShare * w.length_s();
  };
  double seconds = 0, tokens = 0;
  int prefills = 0;
  for (size_t k = 1; k < data_.windows.size(); ++k) {
    const CalibrationWindow& w = data_.windows[k];
    if (!in_fit_[k] || w.prompt_tokens <= 0) continue;
    double run_s = 0;
    for (size_t j = k; j-- > 0;) {
      const CalibrationWindow& v = data_.windows[j];
      if (!in_fit_[j] || !stalled(v) || v.prompt_tokens > 0 ||
          std::abs(v.end_s - data_.windows[j + 1].start_s) > 1e-6) {
        break;
      }
      run_s += v.length_s();
    }
    if (run_s < kMinStalledRunS) continue;
    seconds += run_s + w.length_s() / 2;  // it ended somewhere in window k
    tokens += w.prompt_tokens;
    ++prefills;
  }
  if (prefills >= kMinMeasuredPrefills && tokens > 0) measured_spread_s_per_token_ = seconds / tokens;
}

void BusyPowerFit::FindStretches() {
  const size_t n = data_.windows.size();
  first_.assign(n, 0);
  size_t run = 0;
  for (size_t k = 0; k < n; ++k) {
    while (run + 1 < data_.run_starts.size() && data_.run_starts[run + 1] <= k) ++run;
    const bool joins =
        k > data_.run_starts[run] && std::abs(data_.windows[k].start_s - data_.windows[k - 1].end_s) < 1e-6;
    first_[k] = joins ? first_[k - 1] : k;
  }
}

std::vector<BusyPowerFit::Row> BusyPowerFit::Spread(double prefill_s_per_token) const {
  const size_t n = data_.windows.size();
  const std::vector<size_t>& first = first_;
  std::vector<Row> raw(n, Row{});
  std::vector<double> prefill_cover(n, 0.0);  // share of each window a spread prefill covers
  for (size_t k = 0; k < n; ++k) {
    const CalibrationWindow& w = data_.windows[k];
    const double length = w.length_s();
    raw[k][0] = 1;
    raw[k][1] = w.busy_share;
    raw[k][3] += w.generated_tokens / length;
    raw[k][6] = w.iterations / length;
    raw[k][4] = w.busy_share * std::max(0.0, (w.decode_batch_start + w.decode_batch_end) / 2 - 1);
    if (w.prompt_tokens <= 0) continue;
    // The prefill lasts its spread and ends somewhere in this window (the counter moves at its
    // first token): its tokens are shared among the windows it overlapped, averaged over where in
    // the window it ended (kEndPoints points); what falls before the stretch's first window is
    // given to that window.
    const double lead = prefill_s_per_token * w.prompt_tokens;
    const double tokens2 = w.prompt_tokens * w.prompt_tokens;
    for (int e = 0; e < kEndPoints; ++e) {
      const double end = w.start_s + length * (e + 0.5) / kEndPoints;
      const double from = end - lead;
      const double share = 1.0 / kEndPoints;
      if (lead <= 0) {
        raw[k][2] += share * w.prompt_tokens / length;
        raw[k][5] += share * tokens2 / length;
        continue;
      }
      for (size_t j = k + 1; j-- > first[k];) {
        const CalibrationWindow& v = data_.windows[j];
        const double to = std::min(end, v.end_s);
        const double overlap = j == first[k] ? to - from : to - std::max(from, v.start_s);
        if (overlap <= 0) break;
        const double part = share * std::min(1.0, overlap / lead);
        raw[j][2] += part * w.prompt_tokens / v.length_s();
        // The engine was busy with it, though a long prefill is one engine step and the gauges only
        // move when it ends (vLLM shows nothing running through a 2 s prefill).
        prefill_cover[j] += share * std::min(overlap, lead) / v.length_s();
        raw[j][5] += part * tokens2 / v.length_s();
        if (v.start_s <= from) break;
      }
    }
  }
  for (size_t k = 0; k < n; ++k) {
    // A stalled share: busy with fewer steps than its time holds at the decode step time (a long
    // prefill step ran in it; vLLM counts a step when it ends), or, where the gauges said nothing,
    // the share a prefill's spread covers.
    const double cover = std::min(1.0, prefill_cover[k]);
    if (decode_step_s_ > 0) {
      const CalibrationWindow& w = data_.windows[k];
      raw[k][7] = w.busy_share > 0 ? std::max(0.0, w.busy_share - w.iterations * decode_step_s_ / w.length_s()) : cover;
    }
    raw[k][1] = std::max(raw[k][1], cover);
  }
  return raw;
}

std::vector<BusyPowerFit::Row> BusyPowerFit::Features(const std::vector<Row>& spread, double exponent) const {
  const size_t n = data_.windows.size();
  const std::vector<size_t>& first = first_;
  std::vector<Row> raw = spread;
  for (size_t k = 0; k < n; ++k) {
    // The above-idle terms at the window's clock (none said: the maximum).
    const CalibrationWindow& w = data_.windows[k];
    const double f = std::isnan(w.freq_mhz) ? 1.0
                                            : std::clamp(w.freq_mhz, base_.gpu.min_freq_mhz, base_.gpu.max_freq_mhz) /
                                                  base_.gpu.max_freq_mhz;
    const double scale = std::pow(f, exponent);
    for (int t = 1; t < kTerms; ++t) raw[k][t] *= scale;
  }
  if (sensor_average_s_ <= 0) return raw;
  // The sensor's trailing box: each window's reading is the mean over the sensor's window before
  // its end (or the window itself, when longer).
  std::vector<Row> read(n, Row{});
  for (size_t k = 0; k < n; ++k) {
    const double span = std::max(sensor_average_s_, data_.windows[k].length_s());
    double acc = 0;
    for (size_t j = k + 1; j-- > first[k] && acc < span - 1e-9;) {
      const double take = std::min(data_.windows[j].length_s(), span - acc);
      for (int t = 0; t < kTerms; ++t) read[k][t] += raw[j][t] * take;
      acc += take;
    }
    for (int t = 0; t < kTerms; ++t) read[k][t] /= acc;
  }
  return read;
}

bool BusyPowerFit::Fit(const std::vector<Row>& rows, BusyPowerFitResult& out, double& rss) const {
  const double tdp = base_.gpu.tdp_w;
  BoundedLeastSquares ls(kTerms);
  Row highest{};
  for (size_t k = 0; k < rows.size(); ++k) {
    if (!in_fit_[k]) continue;
    ls.Add(rows[k].data(), data_.windows[k].gpu_w, data_.windows[k].length_s());
    for (int t = 0; t < kTerms; ++t) highest[t] = std::max(highest[t], rows[k][t]);
  }
  std::vector<double> lo(kTerms, 0.0), hi(kTerms, 0.0);
  lo[0] = 0.05 * tdp;
  hi[0] = 0.6 * tdp;
  if (!idle_measured_) lo[0] = hi[0] = std::clamp(base_.gpu.idle_w, lo[0], hi[0]);
  hi[1] = tdp;
  for (int t = 2; t < kTerms; ++t) hi[t] = highest[t] > 0 ? kLoadTermTdpShare * tdp / highest[t] : 0.0;
  hi[7] = highest[7] > 0 ? tdp : 0.0;  // watts over the busy floor while stalled, like the busy step
  const BoundedLeastSquares::Answer a = ls.Solve(lo, hi);
  if (a.x.empty()) return false;
  out.levels = {a.x[0], a.x[1], a.x[2], a.x[3], a.x[4], a.x[5], a.x[6], a.x[7]};
  out.bound_notes.clear();
  for (int t = 0; t < kTerms; ++t) {
    if (!a.at_bound[t] || (t == 0 && !idle_measured_) || hi[t] == 0) continue;
    const bool upper = a.x[t] >= hi[t];
    std::string bound =
        t == 0 ? FixedDecimals(100 * (upper ? 0.6 : 0.05), 0) + " % of TDP"
        : t == 1
            ? (upper ? "TDP" : "0 W")
            : (upper ? FixedDecimals(100 * kLoadTermTdpShare, 0) + " % of TDP at the fit part's highest load" : "0");
    out.bound_notes.push_back(std::string(kTermNames[t]) + " is held at its " + (upper ? "upper" : "lower") +
                              " bound (" + bound + "): the data pulls it " +
                              (upper ? "beyond what a GPU can draw" : "below zero, where no power term can be"));
  }
  rss = a.residual_sum_of_squares;
  return true;
}

void BusyPowerFit::SearchSpread() {
  double best = std::numeric_limits<double>::infinity();
  const std::vector<double> exponents = fit_exponent_
                                            ? std::vector<double>(std::begin(kExponents), std::end(kExponents))
                                            : std::vector<double>{base_.gpu.token_power_freq_exponent};
  // A prefill's length per token measured where the gauges show it (stalled windows before the
  // prompt counter moves) is the spread; otherwise the grid's spread with the smallest residual.
  const std::vector<double> spreads = measured_spread_s_per_token_ > 0
                                          ? std::vector<double>{measured_spread_s_per_token_}
                                          : std::vector<double>(std::begin(kSpreads), std::end(kSpreads));
  for (double spread : spreads) {
    const std::vector<Row> spread_rows = Spread(spread);  // the same for every exponent
    for (double exponent : exponents) {
      BusyPowerFitResult candidate = result_;
      double rss = 0;
      if (!Fit(Features(spread_rows, exponent), candidate, rss) || rss >= best) continue;
      best = rss;
      candidate.prefill_s_per_token = spread;
      candidate.clock_exponent = exponent;
      candidate.clock_exponent_measured = fit_exponent_;
      candidate.idle_measured = idle_measured_;
      result_ = candidate;
    }
  }
  double fit_s = 0;
  for (size_t k = 0; k < data_.windows.size(); ++k) fit_s += in_fit_[k] ? data_.windows[k].length_s() : 0.0;
  result_.fit_rms_w = std::isfinite(best) && fit_s > 0 ? std::sqrt(best / fit_s) : 0.0;
}

Result<BusyPowerFitResult> BusyPowerFit::Run() {
  result_ = BusyPowerFitResult{};
  FindStretches();
  if (Status s = CheckSupport(); !s.ok()) return s.error();
  if (!data_.has_prompt_tokens) result_.unmeasured.push_back("prompt energy: the load has no prompt-token counter");
  if (!data_.has_generation_tokens) {
    result_.unmeasured.push_back("generation energy: the load has no generated-token counter");
  }
  SearchSpread();
  const std::vector<Row> rows = Features(Spread(result_.prefill_s_per_token), result_.clock_exponent);
  // A load term whose load the fit part does not hold is 0: said, not fitted.
  for (int t = 2; t < kTerms; ++t) {
    bool seen = false;
    for (size_t k = 0; k < rows.size() && !seen; ++k) seen = in_fit_[k] && rows[k][t] > 0;
    const std::string name = kTermNames[t];
    const bool said = std::any_of(result_.unmeasured.begin(), result_.unmeasured.end(),
                                  [&](const std::string& u) { return u.rfind(name, 0) == 0; });
    if (!seen && !said) result_.unmeasured.push_back(name + ": the fit part holds none of its load; 0");
  }
  const BusyPowerLevels& l = result_.levels;
  const double x[kTerms] = {l.idle_w,
                            l.busy_step_w,
                            l.prompt_j_per_token,
                            l.generation_j_per_token,
                            l.w_per_running_request,
                            l.prompt_j_per_token_squared,
                            l.j_per_engine_step,
                            l.w_while_stalled};
  result_.predicted_w.resize(rows.size());
  for (size_t k = 0; k < rows.size(); ++k) {
    double p = 0;
    for (int t = 0; t < kTerms; ++t) p += rows[k][t] * x[t];
    result_.predicted_w[k] = p;
  }
  return result_;
}

}  // namespace wattcut::polca
