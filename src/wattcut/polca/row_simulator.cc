#include "wattcut/polca/row_simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>

#include "wattcut/base/energy_units.h"
#include "wattcut/base/order_statistics.h"
#include "wattcut/polca/arrival_expansion.h"
#include "wattcut/polca/control_actuation.h"
#include "wattcut/polca/inference_power_model.h"
#include "wattcut/polca/least_loaded_router.h"
#include "wattcut/polca/random.h"
#include "wattcut/polca/row_ceiling.h"
#include "wattcut/polca/row_limits.h"
#include "wattcut/polca/server_event_queue.h"
#include "wattcut/polca/server_model.h"
#include "wattcut/polca/trace_time_arrivals.h"

namespace wattcut::polca {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

PriorityMetrics Summarize(ServedLog& log, int servers, double duration_s) {
  PriorityMetrics m;
  m.servers = servers;
  m.completed = static_cast<int64_t>(log.latency_s.size());
  m.latency_p50_s = NearestRankPercentile(log.latency_s, 0.50);
  m.latency_p99_s = NearestRankPercentile(log.latency_s, 0.99);
  m.generated_tokens = log.generated_tokens;
  m.busy_server_s = log.busy_server_s;
  m.tokens_per_s = static_cast<double>(log.generated_tokens) / duration_s;
  return m;
}

// The stream of the training servers' phase offsets (distinct from the arrival blocks').
constexpr uint64_t kTrainingPhaseStream = 0x7472'6169'6e69'6e67ULL;

// The iteration boundaries a training server waits for a new plan (the planning server's apply
// step, docs/server.md): it applies from step S_max + 1 + ceil(2 r L), S_max the step in progress,
// r the steps per second, L the apply margin: the boundary ending the step in progress, then
// ceil(2 L / T) more.
int BoundariesToApplyStep(double iteration_s, double apply_margin_s) {
  return 1 + static_cast<int>(std::ceil(2 * apply_margin_s / iteration_s - 1e-12));
}

}  // namespace

int TrainingServersFor(const PolcaConfig& config, int servers) {
  return static_cast<int>(std::lround(servers * config.row.training_share));
}

std::string RunLabel(const RowRunResult& run) {
  if (run.training.servers == 0) return PolicyName(run.policy);
  return PolicyName(run.policy) + "+" + TrainingControlName(run.training_control);
}

int InferenceServersFor(const PolcaConfig& config, int servers) {
  return servers - TrainingServersFor(config, servers);
}

Result<RowRunResult> SimulateRow(const PolcaConfig& config, const RequestTrace& trace, const RowRunOptions& options) {
  Status valid = Validate(config);
  if (!valid.ok()) return valid.error();
  if (trace.requests().empty()) return Error{trace.name() + ": no requests"};
  // Before anything below allocates per server, per reading or per request.
  if (Status bounded = CheckRowRun(config, trace, options); !bounded.ok()) return bounded.error();
  ExpansionOptions expansion_options;
  expansion_options.duration_s = options.duration_s;
  expansion_options.peak_rate_per_s =
      InferenceServersFor(config, options.servers) * config.workload.peak_requests_per_server_s;
  expansion_options.diurnal_trough = config.workload.diurnal_trough;
  expansion_options.peak_hour = config.workload.peak_hour;
  expansion_options.weekend_factor = config.workload.weekend_factor;
  expansion_options.low_priority_share = config.row.low_priority_share;
  expansion_options.seed = options.seed;
  ArrivalExpansion expansion(trace, expansion_options);
  return SimulateRow(config, expansion, options);
}

Result<RowRunResult> SimulateRow(const PolcaConfig& config, const TraceTimeline& timeline,
                                 const RowRunOptions& options) {
  Status valid = Validate(config);
  if (!valid.ok()) return valid.error();
  if (Status bounded = CheckRowRun(config, timeline, options); !bounded.ok()) return bounded.error();
  TraceTimeOptions arrival_options;
  arrival_options.duration_s = options.duration_s;
  arrival_options.peak_rate_per_s =
      InferenceServersFor(config, options.servers) * config.workload.peak_requests_per_server_s;
  arrival_options.low_priority_share = config.row.low_priority_share;
  arrival_options.seed = options.seed;
  Result<std::unique_ptr<TraceTimeArrivals>> arrivals = TraceTimeArrivals::Open(timeline, arrival_options);
  if (!arrivals.ok()) return arrivals.error();
  return SimulateRow(config, **arrivals, options);
}

Result<RowRunResult> SimulateRow(const PolcaConfig& config, ArrivalSource& arrivals, const RowRunOptions& options) {
  Status valid = Validate(config);
  if (!valid.ok()) return valid.error();
  if (Status bounded = CheckRunShape(config, options); !bounded.ok()) return bounded.error();

  const InferencePowerModel model(config);
  const int n_train = TrainingServersFor(config, options.servers);
  const int n = InferenceServersFor(config, options.servers);
  if (n < 1) {
    return Error{"a row of " + std::to_string(options.servers) + " servers with row.training_share = " +
                 std::to_string(config.row.training_share) + " has no inference server"};
  }
  const TrainingJob* job = options.training_job;
  if (n_train > 0 && job == nullptr) return Error{"the row trains (row.training_share > 0) but has no training job"};
  const int n_low = static_cast<int>(std::lround(n * config.row.low_priority_share));
  const InferenceServerSettings server_settings(model, config);  // before the servers that lease its tables
  std::vector<InferenceServer> servers;
  servers.reserve(static_cast<size_t>(n));
  std::vector<Priority> priorities;
  priorities.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    // Low-priority servers are spread evenly over the row (cosmetic: order is irrelevant).
    bool low = (static_cast<int64_t>(i + 1) * n_low) / n != (static_cast<int64_t>(i) * n_low) / n;
    Priority p = low ? Priority::kLow : Priority::kHigh;
    servers.emplace_back(server_settings, p);
    priorities.push_back(p);
  }
  LeastLoadedRouter router(priorities);

  ArrivalBlock block;
  size_t next_arrival = 0;
  bool more_blocks = arrivals.NextBlock(block);

  // Training servers, each started at a seeded random point of its iteration so that their
  // peaks do not line up by construction.
  const TrainingControl control = options.training_control;
  const TrainingTimeline* untargeted = nullptr;
  if (n_train > 0) {
    untargeted = control == TrainingControl::kPowerTarget && config.training.plan_without_target == "fastest"
                     ? &job->plans[job->fastest_plan]
                     : &job->all_max;
  }
  std::vector<TrainingServer> trainers;
  trainers.reserve(static_cast<size_t>(n_train));
  for (int i = 0; i < n_train; ++i) {
    SplitMix64 phase(options.seed ^ kTrainingPhaseStream, static_cast<uint64_t>(i));
    trainers.emplace_back(untargeted, config.training.iteration_phase == "aligned" ? 0.0 : phase.Uniform());
  }
  bool target_met = true;  // by the power target in effect (power-target: the policy's level's)

  RowRunResult result;
  result.policy = options.policy;
  result.training_control = control;
  result.training.servers = n_train;
  result.servers = n + n_train;
  result.duration_s = options.duration_s;
  result.budget_w = config.row_budget_w();
  const double budget = result.budget_w;
  const double period = config.control.telemetry_period_s;
  const double delay = config.control.telemetry_delay_s;

  RowPowerPolicy policy(options.policy, config.policy, config.control);
  policy.SetLevelCeilings(RowCeilings(config, policy, {n_low, n - n_low, n_train}));
  ControlActuation actuation(model.max_freq_mhz(), config.policy.brake_mhz);
  ServerEventQueue queue(static_cast<size_t>(n + n_train), config.service.token_iteration_s_base);
  std::array<ServedLog, 2> logs;

  // Each inference server's power, beside the servers: the re-sum every reading reads 8 bytes a
  // server, not a server's whole state (the same sum, in the same order).
  std::vector<double> server_w;
  server_w.reserve(servers.size());
  for (const auto& s : servers) server_w.push_back(s.power_w());
  auto sum_power = [&]() {
    double w = 0;
    for (double s : server_w) w += s;
    for (const auto& s : trainers) w += s.power_w();
    return w;
  };
  double row_w = sum_power();
  // Each inference server's batch front (InferenceServer::batch_front), beside the servers: the
  // next event's lines are asked for without first reading the server's own.
  std::vector<const void*> batch_fronts;
  batch_fronts.reserve(servers.size());
  for (const auto& s : servers) batch_fronts.push_back(s.batch_front());
  for (size_t k = 0; k < trainers.size(); ++k) queue.Update(static_cast<size_t>(n) + k, trainers[k].next_event_s());
  double t = 0;
  double window_j = 0;
  double total_j = 0;
  double next_sample = period;
  std::deque<PowerReading> readings;  // measured, not yet delivered
  std::vector<float> samples;
  samples.reserve(static_cast<size_t>(options.duration_s / period) + 1);
  PolicyLevel last_level = PolicyLevel::kNormal;
  bool last_brake = false;

  // Applies `change` to server i and carries its effect into the row power, the routing
  // load and the event queue. The router hears of a load only when it changed (a prefill's end
  // rarely changes it): its entry for the server is a line the event would not touch otherwise.
  auto update = [&](size_t i, auto&& change) {
    InferenceServer& s = servers[i];
    const double before = s.power_w();
    const int load_before = s.outstanding();
    change(s);
    if (s.outstanding() != load_before) router.SetLoad(i, s.outstanding());
    row_w += s.power_w() - before;
    server_w[i] = s.power_w();
    queue.Update(i, s.next_event_s());
    // The earliest server's first line and batch front, asked for now: in a row larger than the
    // L2 cache both are misses, and the rest of this event's work hides part of their wait.
    const size_t next = queue.top();
    if (next < servers.size()) {
      __builtin_prefetch(&servers[next]);
      __builtin_prefetch(batch_fronts[next]);
    }
  };
  auto update_trainer = [&](size_t k, auto&& change) {
    TrainingServer& s = trainers[k];
    double before = s.power_w();
    change(s);
    row_w += s.power_w() - before;
    // Never before now (rounding where a clock limit rebased the iteration).
    queue.Update(static_cast<size_t>(n) + k, std::max(t, s.next_event_s()));
  };
  // The power target (power-target control), set when the policy's level changes: the job's plan
  // at its apply step. The planning server's answer (10-25 ms) is not modelled.
  auto set_power_target = [&](PolicyLevel level) {
    const TrainingTimeline* plan = untargeted;
    target_met = true;
    if (level != PolicyLevel::kNormal) {
      plan = &job->PlanFor(level == PolicyLevel::kT1 ? config.policy.t1_training_w : config.policy.t2_training_w,
                           &target_met);
    }
    for (size_t k = 0; k < trainers.size(); ++k) {
      update_trainer(k, [&](TrainingServer& s) {
        s.SetPlan(plan, BoundariesToApplyStep(s.running().iteration_s(), config.training.apply_margin_s));
      });
    }
  };
  // The training servers' clock limit, when the ceilings in effect change: the brake; under locks
  // the low-priority class's lock or cap; under power-target the low-priority lock as a ceiling
  // while the target is not met (when that lock draws less than the job's lowest-peak plan).
  auto apply_clock_limits = [&](double now) {
    if (trainers.empty()) return;
    const GpuLimits low = actuation.Limits(Priority::kLow);
    const TrainingTimeline* limit = nullptr;
    if (actuation.brake_active()) {
      limit = &job->Brake();
    } else if (control == TrainingControl::kLocks) {
      limit = job->LockFor(low.freq_mhz, low.cap_w);
    } else if (!target_met) {
      const TrainingTimeline* lock = job->LockFor(low.freq_mhz, low.cap_w);
      const TrainingTimeline* plan = trainers.front().plan();
      if (lock != nullptr && lock->peak_power_per_gpu_w < plan->peak_power_per_gpu_w) limit = lock;
    }
    for (size_t k = 0; k < trainers.size(); ++k) {
      update_trainer(k, [&](TrainingServer& s) { s.SetClockLimit(limit, now); });
    }
  };

  while (true) {
    // Past empty blocks (an hour without requests), so the next arrival is never skipped.
    while (next_arrival == block.size() && more_blocks) {
      more_blocks = arrivals.NextBlock(block);
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
    if (!trainers.empty()) {
      if (trainers.front().clock_limit() != nullptr) result.training.limited_server_s += dt * n_train;
      if (control == TrainingControl::kPowerTarget && policy.level() != PolicyLevel::kNormal) {
        result.training.targeted_server_s += dt * n_train;
        if (!target_met) result.training.target_not_met_s += dt;
      }
    }
    t = t_next;

    if (t == next_sample) {
      total_j += window_j;
      double reading = window_j / period / budget;
      samples.push_back(static_cast<float>(reading));
      readings.push_back({t, reading});
      window_j = 0;
      next_sample += period;
      row_w = sum_power();  // re-sum to keep rounding from drifting
    }
    if (last) break;

    if (t == t_actuation) {
      if (actuation.ApplyUntil(t)) {
        for (size_t i = 0; i < servers.size(); ++i) {
          update(i, [&](InferenceServer& s) { s.SetLimits(actuation.Limits(s.priority()), t); });
        }
        apply_clock_limits(t);
      }
    } else if (t == t_reading) {
      PowerReading reading = readings.front();
      readings.pop_front();
      for (const ControlCommand& c : policy.Decide(reading, t)) actuation.Submit(c);
      if (policy.level() != last_level && control == TrainingControl::kPowerTarget && !trainers.empty()) {
        set_power_target(policy.level());
        apply_clock_limits(t);  // a ceiling for a target not met, or none any more
      }
      if (policy.level() != last_level || policy.brake_requested() != last_brake) {
        last_level = policy.level();
        last_brake = policy.brake_requested();
        result.actions.push_back({t, last_level, last_brake});
      }
    } else if (t == t_server) {
      const size_t i = queue.top();
      if (i < static_cast<size_t>(n)) {
        update(i, [&](InferenceServer& s) { s.HandleEvent(t, logs[static_cast<size_t>(s.priority())]); });
      } else {
        update_trainer(i - static_cast<size_t>(n), [&](TrainingServer& s) {
          const TrainingTimeline* before = s.running_plan();
          s.HandleEvent(t);
          if (s.running_plan() != before) ++result.training.plan_changes;
        });
      }
    } else if (t == t_arrival) {
      const Arrival& a = block[next_arrival++];
      ++result.arrivals;
      update(router.Route(a.priority), [&](InferenceServer& s) { s.Arrive(a, t); });
    }
  }

  if (Status source = arrivals.status(); !source.ok()) return source.error();
  for (auto& s : servers) {
    s.Finish(t, logs[static_cast<size_t>(s.priority())]);
    result.unfinished += s.outstanding();
  }
  for (const TrainingServer& s : trainers) result.training.iterations += s.IterationsDone(t);
  result.brake_events = policy.brake_engagements();
  result.energy_kwh = (total_j + window_j) / kJoulesPerKwh;
  if (!samples.empty()) {
    double sum = 0;
    for (float v : samples) {
      sum += v;
      if (v > 1.0f) result.seconds_above_budget += period;
    }
    result.power_mean = sum / static_cast<double>(samples.size());
    std::vector<float> sorted = samples;
    result.power_max = *std::max_element(sorted.begin(), sorted.end());
    result.power_p50 = NearestRankPercentile(sorted, 0.50);
    result.power_p99 = NearestRankPercentile(sorted, 0.99);
  }
  result.high = Summarize(logs[0], static_cast<int>(router.servers(Priority::kHigh)), options.duration_s);
  result.low = Summarize(logs[1], static_cast<int>(router.servers(Priority::kLow)), options.duration_s);
  if (options.keep_power_samples) result.power_samples = std::move(samples);
  return result;
}

double EnergyPerServedTokenJ(const RowRunResult& run) {
  const int64_t tokens = run.high.generated_tokens + run.low.generated_tokens;
  return tokens > 0 ? run.energy_kwh * kJoulesPerKwh / static_cast<double>(tokens) : 0.0;
}

RunImpact CompareRuns(const RowRunResult& run, const RowRunResult& reference) {
  auto ratio = [](double a, double b) { return b > 0 ? a / b - 1 : 0.0; };
  auto one = [&](const PriorityMetrics& r, const PriorityMetrics& ref) {
    return PriorityImpact{ratio(r.latency_p50_s, ref.latency_p50_s), ratio(r.latency_p99_s, ref.latency_p99_s),
                          ratio(r.tokens_per_s, ref.tokens_per_s)};
  };
  RunImpact impact{one(run.high, reference.high), one(run.low, reference.low),
                   ratio(run.training.iterations, reference.training.iterations),
                   ratio(EnergyPerServedTokenJ(run), EnergyPerServedTokenJ(reference))};
  impact.arrivals = run.arrivals;
  impact.extra_unfinished = run.unfinished - reference.unfinished;
  impact.reference_unfinished = reference.unfinished;
  return impact;
}

namespace {

double ShareOf(int64_t requests, int64_t arrivals) {
  return arrivals > 0 ? static_cast<double>(requests) / static_cast<double>(arrivals) : 0.0;
}

}  // namespace

SloVerdict JudgeSlos(const RunImpact& impact) {
  if (ShareOf(impact.reference_unfinished, impact.arrivals) > kOverloadedUnfinishedShare) {
    return SloVerdict::kCannotJudge;
  }
  if (ShareOf(impact.extra_unfinished, impact.arrivals) > kMaxExtraUnfinishedShare) return SloVerdict::kMissed;
  const bool latencies = impact.high.p50_latency < 0.01 && impact.high.p99_latency < 0.05 &&
                         impact.low.p50_latency < 0.05 && impact.low.p99_latency < 0.50;
  return latencies ? SloVerdict::kMet : SloVerdict::kMissed;
}

std::string SloVerdictName(SloVerdict verdict) {
  switch (verdict) {
    case SloVerdict::kMet:
      return "met";
    case SloVerdict::kMissed:
      return "missed";
    case SloVerdict::kCannotJudge:
      return "cannot judge";
  }
  return "?";
}

std::string SloVerdictText(const RunImpact& impact) {
  const SloVerdict verdict = JudgeSlos(impact);
  const std::string of = " of the " + std::to_string(impact.arrivals) + " requests unfinished";
  if (verdict == SloVerdict::kCannotJudge) {
    return "cannot be judged: the unconstrained row itself leaves " + std::to_string(impact.reference_unfinished) + of +
           " (it is overloaded whatever the policy does: lower the load, e.g. workload.peak_utilization)";
  }
  if (verdict == SloVerdict::kMissed && ShareOf(impact.extra_unfinished, impact.arrivals) > kMaxExtraUnfinishedShare) {
    return "missed: the run leaves " + std::to_string(impact.extra_unfinished) + " more" + of +
           " than the unconstrained row (over 1 %: their latency is beyond every completed one's)";
  }
  return SloVerdictName(verdict);
}

bool MeetsSlos(const RunImpact& impact) { return JudgeSlos(impact) == SloVerdict::kMet; }

}  // namespace wattcut::polca
