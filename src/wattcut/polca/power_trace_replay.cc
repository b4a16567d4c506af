#include "wattcut/polca/power_trace_replay.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "wattcut/base/energy_units.h"
#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/order_statistics.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/polca/row_ceiling.h"

namespace wattcut::polca {
namespace {

// EstimateServerPowerW with the clock factor computed once per class and tick.
struct ClassEffect {
  double freq_factor = 1;  // (f / f_max)^gamma
  double cap_w = 0;
};

double Estimate(const PolcaConfig& c, double recorded_w, const ClassEffect& e) {
  const double per_gpu_w = c.server.gpus * (1 + c.server.other_w_per_gpu_w);
  const double gpu_w = (recorded_w - c.server.other_idle_w) / per_gpu_w;
  if (gpu_w <= c.gpu.idle_w) return recorded_w;
  double estimated = c.gpu.idle_w + (gpu_w - c.gpu.idle_w) * e.freq_factor;
  if (e.cap_w > 0) estimated = std::min(estimated, std::max(e.cap_w, c.gpu.idle_w));
  return recorded_w - per_gpu_w * std::max(0.0, gpu_w - estimated);
}

ClassEffect EffectOf(const PolcaConfig& c, const GpuLimits& limits) {
  const double gamma = std::min(c.gpu.prompt_power_freq_exponent, c.gpu.token_power_freq_exponent);
  const double f = std::clamp(limits.freq_mhz, 0.0, c.gpu.max_freq_mhz);
  return {std::pow(f / c.gpu.max_freq_mhz, gamma), limits.cap_w};
}

std::string Seconds(double s) { return FixedDecimals(s, s == std::floor(s) ? 0 : 3) + " s"; }

}  // namespace

double EstimateServerPowerW(const PolcaConfig& config, double recorded_w, const GpuLimits& limits) {
  return Estimate(config, recorded_w, EffectOf(config, limits));
}

std::vector<Priority> ReplayPriorities(const PowerTrace& trace, double low_priority_share) {
  const int n = static_cast<int>(trace.servers().size());
  std::vector<Priority> out(static_cast<size_t>(n), Priority::kHigh);
  if (trace.priorities_given()) {
    for (int i = 0; i < n; ++i) out[static_cast<size_t>(i)] = trace.servers()[static_cast<size_t>(i)].priority;
    return out;
  }
  const int n_low = static_cast<int>(std::lround(n * low_priority_share));
  for (int i = 0; i < n; ++i) {
    bool low = (static_cast<int64_t>(i + 1) * n_low) / n != (static_cast<int64_t>(i) * n_low) / n;
    out[static_cast<size_t>(i)] = low ? Priority::kLow : Priority::kHigh;
  }
  return out;
}

Result<ReplayResult> ReplayPowerTrace(const PowerTrace& trace, const PolcaConfig& config,
                                      const ReplayOptions& options) {
  if (Status valid = Validate(config); !valid.ok()) return valid.error();
  if (trace.servers().empty()) return Error{trace.name() + ": no readings"};
  const double period = config.control.telemetry_period_s;
  const double delay = config.control.telemetry_delay_s;
  if (!(options.gap_s >= 0) || !std::isfinite(options.gap_s)) {
    return Error{"the gap must be a finite number of seconds >= 0 (0: three telemetry periods), got " +
                 FixedDecimals(options.gap_s, 3)};
  }
  const double gap_s = options.gap_s > 0 ? options.gap_s : 3 * std::max(period, trace.sample_interval_s());
  const int64_t last_tick = static_cast<int64_t>(std::floor(trace.span_s() / period + 1e-9));
  const int64_t ticks = last_tick + 1;
  if (ticks > kMaxReplayPeriods) {
    return Error{trace.name() + ": " + std::to_string(ticks) + " telemetry periods of " + Seconds(period) +
                 ", more than the " + std::to_string(kMaxReplayPeriods) +
                 " a replay may hold (raise control.telemetry_period_s or cut the trace)"};
  }
  const size_t n = trace.servers().size();
  if (static_cast<double>(ticks) * static_cast<double>(n) > kMaxReplayServerPeriods) {
    return Error{trace.name() + ": " + std::to_string(n) + " servers x " + std::to_string(ticks) +
                 " telemetry periods is more than the 2e9 a replay computes (raise control.telemetry_period_s)"};
  }

  ReplayResult result;
  result.policy = options.policy;
  result.budget_w = config.row_budget_w();
  result.period_s = period;
  result.gap_s = gap_s;
  result.servers = static_cast<int>(n);
  result.priorities_from_trace = trace.priorities_given();
  const std::vector<Priority> priority = ReplayPriorities(trace, config.row.low_priority_share);
  result.low_priority_servers = static_cast<int>(std::count(priority.begin(), priority.end(), Priority::kLow));

  // Gaps, from the trace itself.
  for (const TracedServer& s : trace.servers()) {
    double previous = 0;
    for (const PowerSample& sample : s.samples) {
      if (sample.time_s - previous > gap_s) result.gaps.push_back({s.name, previous, sample.time_s});
      previous = sample.time_s;
    }
    if (trace.span_s() - previous > gap_s) result.gaps.push_back({s.name, previous, trace.span_s()});
  }
  for (const TraceGap& g : result.gaps) {
    result.warnings.push_back("server '" + PrintableText(g.server) + "' has no reading from " + Seconds(g.from_s) +
                              " to " + Seconds(g.to_s) + " (more than the gap of " + Seconds(gap_s) +
                              "): counted at its last reading for " + Seconds(gap_s) +
                              ", then at its highest reading so far");
  }
  if (trace.sample_interval_s() > period * (1 + 1e-9)) {
    result.warnings.push_back("the trace has a reading every " + Seconds(trace.sample_interval_s()) +
                              " (median) but the policy decides every " + Seconds(period) +
                              " (control.telemetry_period_s): each reading is held over several periods");
  }

  RowPowerPolicy policy(options.policy, config.policy, config.control);
  policy.SetLevelCeilings(
      RowCeilings(config, policy, {result.low_priority_servers, result.servers - result.low_priority_servers, 0}));
  ControlActuation actuation(config.gpu.max_freq_mhz, config.policy.brake_mhz);
  std::vector<size_t> next(n, 0);      // index of each server's next reading not yet reached
  std::vector<double> peak_w(n, 0);    // highest reading so far
  std::deque<PowerReading> pending;    // readings measured, not yet decided
  std::deque<double> pending_arrival;  // when each reaches the policy
  result.periods.reserve(static_cast<size_t>(ticks));
  std::vector<double> before_fraction, after_fraction;
  before_fraction.reserve(static_cast<size_t>(ticks));
  after_fraction.reserve(static_cast<size_t>(ticks));

  auto deliver = [&](double t) {
    while (!pending.empty() && pending_arrival.front() <= t) {
      for (const ControlCommand& c : policy.Decide(pending.front(), pending_arrival.front())) {
        actuation.Submit(c);
        result.commands.push_back(c);
      }
      pending.pop_front();
      pending_arrival.pop_front();
    }
  };

  double before_j = 0, after_j = 0;
  for (int64_t k = 0; k < ticks; ++k) {
    const double t = static_cast<double>(k) * period;
    deliver(t);
    actuation.ApplyUntil(t);
    const ClassEffect effect[2] = {EffectOf(config, actuation.Limits(Priority::kHigh)),
                                   EffectOf(config, actuation.Limits(Priority::kLow))};
    double before = 0, after = 0, measured_at = t;
    for (size_t i = 0; i < n; ++i) {
      const std::vector<PowerSample>& samples = trace.servers()[i].samples;
      while (next[i] < samples.size() && samples[next[i]].time_s <= t) {
        peak_w[i] = std::max(peak_w[i], samples[next[i]].power_w);
        ++next[i];
      }
      // Before its first reading a server counts at it (its "last" reading is the trace start).
      const double last_at = next[i] == 0 ? 0 : samples[next[i] - 1].time_s;
      double w = next[i] == 0 ? samples[0].power_w : samples[next[i] - 1].power_w;
      if (next[i] == 0) peak_w[i] = std::max(peak_w[i], w);
      if (t - last_at > gap_s) {
        w = peak_w[i];
        measured_at = std::min(measured_at, last_at);
      }
      before += w;
      after += Estimate(config, w, effect[static_cast<size_t>(priority[i])]);
    }
    before_j += before * period;
    after_j += after * period;
    before_fraction.push_back(before / result.budget_w);
    after_fraction.push_back(after / result.budget_w);
    pending.push_back({measured_at, after / result.budget_w});
    pending_arrival.push_back(t + delay);
    deliver(t);
    result.periods.push_back({t, measured_at, before, after, policy.level(), policy.brake_requested()});
    result.level_s[static_cast<size_t>(policy.level())] += period;
    if (policy.brake_requested()) result.brake_s += period;
  }

  for (const ControlCommand& c : result.commands) {
    switch (c.target) {
      case ControlCommand::Target::kLowPriority:
        ++result.low_commands;
        break;
      case ControlCommand::Target::kHighPriority:
        ++result.high_commands;
        break;
      case ControlCommand::Target::kBrake:
        ++result.brake_commands;
        break;
    }
  }
  result.brake_engagements = policy.brake_engagements();
  result.before_peak = *std::max_element(before_fraction.begin(), before_fraction.end());
  result.after_peak = *std::max_element(after_fraction.begin(), after_fraction.end());
  result.before_p99 = NearestRankPercentile(before_fraction, 0.99);
  result.after_p99 = NearestRankPercentile(after_fraction, 0.99);
  result.before_energy_kwh = before_j / kJoulesPerKwh;
  result.after_energy_kwh = after_j / kJoulesPerKwh;
  return result;
}

}  // namespace wattcut::polca
