#include "wattcut/polca/row_simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "wattcut/polca/arrival_expansion.h"
#include "wattcut/polca/control_actuation.h"
#include "wattcut/polca/inference_power_model.h"
#include "wattcut/polca/row_limits.h"
#include "wattcut/polca/server_event_queue.h"
#include "wattcut/polca/server_model.h"

namespace wattcut::polca {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Nearest-rank percentile (q in [0, 1]); sorts part of `values`.
template <typename T>
double Percentile(std::vector<T>& values, double q) {
  if (values.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  size_t k = std::min(values.size() - 1, rank == 0 ? 0 : rank - 1);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return static_cast<double>(values[k]);
}

PriorityMetrics Summarize(ServedLog& log, int servers, double duration_s) {
  PriorityMetrics m;
  m.servers = servers;
  m.completed = static_cast<int64_t>(log.latency_s.size());
  m.latency_p50_s = Percentile(log.latency_s, 0.50);
  m.latency_p99_s = Percentile(log.latency_s, 0.99);
  m.generated_tokens = log.generated_tokens;
  m.busy_server_s = log.busy_server_s;
  m.tokens_per_s = static_cast<double>(log.generated_tokens) / duration_s;
  return m;
}

}  // namespace

Result<RowRunResult> SimulateRow(const PolcaConfig& config, const RequestTrace& trace, const RowRunOptions& options) {
  Status valid = Validate(config);
  if (!valid.ok()) return valid.error();
  if (trace.requests().empty()) return Error{trace.name() + ": no requests"};
  // Before anything below allocates per server, per reading or per request.
  if (Status bounded = CheckRowRun(config, trace, options); !bounded.ok()) return bounded.error();

  const InferencePowerModel model(config);
  const int n = options.servers;
  const int n_low = static_cast<int>(std::lround(n * config.row.low_priority_share));
  std::vector<InferenceServer> servers;
  servers.reserve(static_cast<size_t>(n));
  std::array<std::vector<int>, 2> pool;  // by Priority
  for (int i = 0; i < n; ++i) {
    // Low-priority servers are spread evenly over the row (cosmetic: order is irrelevant).
    bool low = (static_cast<int64_t>(i + 1) * n_low) / n != (static_cast<int64_t>(i) * n_low) / n;
    Priority p = low ? Priority::kLow : Priority::kHigh;
    servers.emplace_back(model, config, p);
    pool[static_cast<size_t>(p)].push_back(i);
  }
  std::array<size_t, 2> round_robin{0, 0};
  std::vector<int> load(static_cast<size_t>(n), 0);  // outstanding requests, compact for routing

  ExpansionOptions expansion_options;
  expansion_options.duration_s = options.duration_s;
  expansion_options.peak_rate_per_s = n * config.workload.peak_requests_per_server_s;
  expansion_options.diurnal_trough = config.workload.diurnal_trough;
  expansion_options.peak_hour = config.workload.peak_hour;
  expansion_options.weekend_factor = config.workload.weekend_factor;
  expansion_options.low_priority_share = config.row.low_priority_share;
  expansion_options.seed = options.seed;
  ArrivalExpansion expansion(trace, expansion_options);
  std::vector<Arrival> block;
  size_t next_arrival = 0;
  bool more_blocks = expansion.NextBlock(block);

  RowRunResult result;
  result.policy = options.policy;
  result.servers = n;
  result.duration_s = options.duration_s;
  result.budget_w = config.row_budget_w();
  const double budget = result.budget_w;
  const double period = config.control.telemetry_period_s;
  const double delay = config.control.telemetry_delay_s;

  RowPowerPolicy policy(options.policy, config.policy, config.control);
  ControlActuation actuation(model.max_freq_mhz(), config.policy.brake_mhz);
  ServerEventQueue queue(static_cast<size_t>(n));
  std::array<ServedLog, 2> logs;

  double row_w = 0;
  for (const auto& s : servers) row_w += s.power_w();
  double t = 0;
  double window_j = 0;
  double total_j = 0;
  double next_sample = period;
  std::deque<PowerReading> readings;  // measured, not yet delivered
  std::vector<float> samples;
  samples.reserve(static_cast<size_t>(options.duration_s / period) + 1);
  PolicyLevel last_level = PolicyLevel::kNormal;
  bool last_brake = false;

  auto route = [&](const Arrival& a) -> int {
    size_t cls = static_cast<size_t>(a.priority);
    if (pool[cls].empty()) cls = 1 - cls;
    const std::vector<int>& members = pool[cls];
    size_t start = round_robin[cls]++ % members.size();
    int best = members[start];
    int best_load = load[static_cast<size_t>(best)];
    const size_t m = members.size();
    for (size_t k = 1; k < m && best_load > 0; ++k) {
      size_t at = start + k;
      int candidate = members[at >= m ? at - m : at];
      if (load[static_cast<size_t>(candidate)] < best_load) {
        best = candidate;
        best_load = load[static_cast<size_t>(candidate)];
      }
    }
    return best;
  };
  // Applies `change` to server i and carries its effect into the row power, the routing
  // load and the event queue.
  auto update = [&](size_t i, auto&& change) {
    InferenceServer& s = servers[i];
    double before = s.power_w();
    change(s);
    load[i] = s.outstanding();
    row_w += s.power_w() - before;
    queue.Update(i, s.next_event_s());
  };

  while (true) {
    if (next_arrival == block.size() && more_blocks) {
      more_blocks = expansion.NextBlock(block);
      next_arrival = 0;
    }
    const double t_arrival = next_arrival < block.size() ? block[next_arrival].time_s : kInf;
    const double t_server = queue.top_time();
    const double t_actuation = actuation.NextChangeAt();
    const double t_reading = readings.empty() ? kInf : readings.front().measured_at_s + delay;
    double t_next = std::min({t_arrival, t_server, t_actuation, t_reading, next_sample});
    const bool last = t_next >= options.duration_s;
    if (last) t_next = options.duration_s;

    const double dt = t_next - t;
    window_j += row_w * dt;
    if (actuation.brake_active()) result.brake_active_s += dt;
    result.level_s[static_cast<size_t>(policy.level())] += dt;
    t = t_next;

    if (t == next_sample) {
      total_j += window_j;
      double reading = window_j / period / budget;
      samples.push_back(static_cast<float>(reading));
      readings.push_back({t, reading});
      window_j = 0;
      next_sample += period;
      row_w = 0;  // re-sum to keep rounding from drifting
      for (const auto& s : servers) row_w += s.power_w();
    }
    if (last) break;

    if (t == t_actuation) {
      if (actuation.ApplyUntil(t)) {
        for (size_t i = 0; i < servers.size(); ++i) {
          update(i, [&](InferenceServer& s) { s.SetLimits(actuation.Limits(s.priority()), t); });
        }
      }
    } else if (t == t_reading) {
      PowerReading reading = readings.front();
      readings.pop_front();
      for (const ControlCommand& c : policy.Decide(reading, t)) actuation.Submit(c);
      if (policy.level() != last_level || policy.brake_requested() != last_brake) {
        last_level = policy.level();
        last_brake = policy.brake_requested();
        result.actions.push_back({t, last_level, last_brake});
      }
    } else if (t == t_server) {
      update(queue.top(), [&](InferenceServer& s) { s.HandleEvent(t, logs[static_cast<size_t>(s.priority())]); });
    } else if (t == t_arrival) {
      const Arrival& a = block[next_arrival++];
      ++result.arrivals;
      update(static_cast<size_t>(route(a)), [&](InferenceServer& s) { s.Arrive(a, t); });
    }
  }

  for (auto& s : servers) {
    s.Finish(t, logs[static_cast<size_t>(s.priority())]);
    result.unfinished += s.outstanding();
  }
  result.brake_events = policy.brake_engagements();
  result.energy_kwh = (total_j + window_j) / 3.6e6;
  if (!samples.empty()) {
    double sum = 0;
    for (float v : samples) {
      sum += v;
      if (v > 1.0f) result.seconds_above_budget += period;
    }
    result.power_mean = sum / static_cast<double>(samples.size());
    std::vector<float> sorted = samples;
    result.power_max = *std::max_element(sorted.begin(), sorted.end());
    result.power_p50 = Percentile(sorted, 0.50);
    result.power_p99 = Percentile(sorted, 0.99);
  }
  result.high = Summarize(logs[0], static_cast<int>(pool[0].size()), options.duration_s);
  result.low = Summarize(logs[1], static_cast<int>(pool[1].size()), options.duration_s);
  if (options.keep_power_samples) result.power_samples = std::move(samples);
  return result;
}

RunImpact CompareRuns(const RowRunResult& run, const RowRunResult& reference) {
  auto ratio = [](double a, double b) { return b > 0 ? a / b - 1 : 0.0; };
  auto one = [&](const PriorityMetrics& r, const PriorityMetrics& ref) {
    return PriorityImpact{ratio(r.latency_p50_s, ref.latency_p50_s), ratio(r.latency_p99_s, ref.latency_p99_s),
                          ratio(r.tokens_per_s, ref.tokens_per_s)};
  };
  return {one(run.high, reference.high), one(run.low, reference.low)};
}

bool MeetsSlos(const RunImpact& impact) {
  return impact.high.p50_latency < 0.01 && impact.high.p99_latency < 0.05 && impact.low.p50_latency < 0.05 &&
         impact.low.p99_latency < 0.50;
}

}  // namespace wattcut::polca
