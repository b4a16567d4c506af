#include "wattcut/polca/calibration_alignment.h"

#include <cmath>
#include <cstdlib>
#include <map>

#include "wattcut/base/fixed_decimals.h"

namespace wattcut::polca {
namespace {

constexpr int kStepS = 900;
constexpr int kMaxShiftS = 14 * 3600;

std::string HoursText(int seconds) {
  const int minutes = std::abs(seconds) / 60;
  return std::to_string(minutes / 60) + " h" + (minutes % 60 != 0 ? " " + std::to_string(minutes % 60) + " min" : "");
}

std::string OffsetText(int seconds) {
  const int minutes = std::abs(seconds) / 60;
  const int h = minutes / 60, m = minutes % 60;
  return std::string(seconds < 0 ? "-" : "+") + (h < 10 ? "0" : "") + std::to_string(h) + ":" + (m < 10 ? "0" : "") +
         std::to_string(m);
}

}  // namespace

bool PowerLoadAlignment::better_elsewhere() const {
  // Where nothing overlaps as read, any clear line-up is news; where they do, a much better one.
  if (best_shift_s == 0) return false;
  return as_read ? best >= 0.5 && best >= *as_read + 0.3 : best >= 0.3;
}

std::string PowerLoadAlignment::Advice(std::optional<int> offset_used_s) const {
  const int shift = static_cast<int>(std::lround(best_shift_s));
  std::string out = "the power and the load line up best with the power's times moved " + HoursText(shift) +
                    (shift > 0 ? " later" : " earlier") + " (correlation " + FixedDecimals(best, 2) +
                    "; as read: " + (as_read ? FixedDecimals(*as_read, 2) : std::string("too little overlap")) + ")";
  // Power's UTC = local - offset; moved by `shift` it is local - (offset - shift).
  if (offset_used_s)
    out += ": did you mean --utc-offset " + OffsetText(*offset_used_s - shift) + "?";
  else
    out += ": is --time-zone the zone nvidia-smi wrote its times in?";
  return out;
}

std::optional<PowerLoadAlignment> MeasureAlignment(const std::vector<telemetry::GpuPowerSeries>& gpus,
                                                   const telemetry::ServingLoadSeries& load) {
  // Power: per whole second, the mean over the GPUs' samples in it.
  std::map<long long, std::pair<double, int>> power;
  for (const telemetry::GpuPowerSeries& g : gpus) {
    for (const telemetry::GpuPowerSample& s : g.samples) {
      auto& cell = power[static_cast<long long>(std::floor(s.time_s))];
      cell.first += s.power_w;
      cell.second += 1;
    }
  }
  // Load: per whole second, the mean over its scrapes of the requests the engine held (running and
  // waiting), plus one where it did work since the scrape before: a busy server's power follows
  // how much it holds, an idle one's that it works at all. The first 6 hours of load are plenty to
  // see the alignment, and bound the work (113 shifts).
  std::map<long long, std::pair<double, int>> held;
  const auto& ls = load.samples;
  for (size_t i = 0; i < ls.size() && ls[i].time_s - ls.front().time_s < 6 * 3600; ++i) {
    double activity =
        (std::isnan(ls[i].running) ? 0.0 : ls[i].running) + (std::isnan(ls[i].waiting) ? 0.0 : ls[i].waiting);
    // Work done since the scrape before (an engine step or a token), seen though nothing is held at
    // either scrape: a short request falls between two.
    if (i > 0 && (ls[i].iterations > ls[i - 1].iterations || ls[i].generation_tokens > ls[i - 1].generation_tokens ||
                  ls[i].prompt_tokens > ls[i - 1].prompt_tokens)) {
      activity += 1;
    }
    auto& cell = held[static_cast<long long>(std::floor(ls[i].time_s))];
    cell.first += activity;
    cell.second += 1;
  }
  std::vector<std::pair<long long, double>> busy;  // (second, activity)
  for (const auto& [second, cell] : held) busy.push_back({second, cell.first / cell.second});
  auto correlation = [&](int shift) -> std::optional<double> {
    double n = 0, sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
    for (const auto& [t, b] : busy) {
      auto it = power.find(t - shift);
      if (it == power.end()) continue;
      const double p = it->second.first / it->second.second;
      n += 1;
      sx += b;
      sy += p;
      sxx += b * b;
      syy += p * p;
      sxy += b * p;
    }
    if (n < kMinOverlapS) return std::nullopt;
    const double vx = sxx / n - (sx / n) * (sx / n), vy = syy / n - (sy / n) * (sy / n);
    if (vx <= 1e-12 || vy <= 1e-9) return std::nullopt;
    return (sxy / n - (sx / n) * (sy / n)) / std::sqrt(vx * vy);
  };
  PowerLoadAlignment out;
  out.as_read = correlation(0);
  bool any = out.as_read.has_value();
  if (any) out.best = *out.as_read;
  for (int shift = -kMaxShiftS; shift <= kMaxShiftS; shift += kStepS) {
    if (shift == 0) continue;
    const std::optional<double> c = correlation(shift);
    if (!c) continue;
    if (!any || *c > out.best) {
      out.best = *c;
      out.best_shift_s = shift;
    }
    any = true;
  }
  if (!any) return std::nullopt;
  return out;
}

}  // namespace wattcut::polca
