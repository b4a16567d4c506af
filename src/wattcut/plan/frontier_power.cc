#include "wattcut/plan/frontier_power.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <utility>

#include "wattcut/dag/topological_order.h"
#include "wattcut/profile/chunk_split.h"

namespace wattcut {

Result<FrontierPower> FrontierPower::Create(const Frontier& frontier, const TimeCostProblem& problem) {
  size_t scheduled = 0;
  for (const auto& device : frontier.setup().schedule) scheduled += device.size();
  if (scheduled != static_cast<size_t>(frontier.num_computations())) {
    return Error{"power: the frontier's schedule has " + std::to_string(scheduled) + " computations, its durations " +
                 std::to_string(frontier.num_computations())};
  }
  return Create(frontier, problem, frontier.setup().unit_time_s, frontier.num_stages() * frontier.setup().p2p_power_w);
}

Result<FrontierPower> FrontierPower::Create(const DurationFrontier& frontier, const TimeCostProblem& problem,
                                            double unit_time_s, double blocking_power_w) {
  const auto n = static_cast<size_t>(problem.num_activities());
  if (n != static_cast<size_t>(frontier.num_computations())) {
    return Error{"power: the planning problem has " + std::to_string(n) + " computations, the frontier " +
                 std::to_string(frontier.num_computations())};
  }
  if (!(unit_time_s > 0)) return Error{"power: the frontier's unit time must be > 0"};
  if (!(blocking_power_w >= 0) || !std::isfinite(blocking_power_w)) {
    return Error{"power: the blocking power must be a finite number of watts >= 0"};
  }
  FrontierPower power;
  power.problem_ = &problem;
  power.unit_time_s_ = unit_time_s;
  power.blocking_power_w_ = blocking_power_w;
  power.first_in_.assign(n + 1, 0);
  for (auto [u, v] : problem.precedences) {
    if (u < 0 || v < 0 || static_cast<size_t>(u) >= n || static_cast<size_t>(v) >= n) {
      return Error{"power: a precedence names a computation out of range"};
    }
    ++power.first_in_[static_cast<size_t>(v) + 1];
  }
  for (size_t v = 0; v < n; ++v) power.first_in_[v + 1] += power.first_in_[v];
  power.in_.resize(problem.precedences.size());
  std::vector<int> next(power.first_in_.begin(), power.first_in_.end() - 1);
  for (auto [u, v] : problem.precedences) power.in_[static_cast<size_t>(next[static_cast<size_t>(v)]++)] = u;
  power.topological_order_ = TopologicalOrder(n, problem.precedences);
  if (power.topological_order_.size() != n) return Error{"power: the computations' dependencies are cyclic"};
  return power;
}

Result<double> FrontierPower::ExcessPower(size_t computation, int64_t duration_units) const {
  const CostTable& table = problem_->table_of(static_cast<int>(computation));
  if (duration_units < table.min_duration || duration_units > table.max_duration) {
    return Error{"power: computation " + std::to_string(computation) + " is planned for " +
                 std::to_string(duration_units) + " unit times, outside its cost table's " +
                 std::to_string(table.min_duration) + ".." + std::to_string(table.max_duration)};
  }
  if (duration_units == 0) return 0.0;  // takes no time: no power
  return table.at(duration_units) / (static_cast<double>(duration_units) * unit_time_s_);
}

int64_t FrontierPower::Schedule(const std::vector<int64_t>& durations, std::vector<int64_t>& start) const {
  start.assign(durations.size(), 0);
  int64_t makespan = 0;
  for (int v : topological_order_) {
    const auto vs = static_cast<size_t>(v);
    int64_t earliest = 0;
    for (int k = first_in_[vs]; k < first_in_[vs + 1]; ++k) {
      const auto p = static_cast<size_t>(in_[static_cast<size_t>(k)]);
      earliest = std::max(earliest, start[p] + durations[p]);
    }
    start[vs] = earliest;
    makespan = std::max(makespan, earliest + durations[vs]);
  }
  return makespan;
}

int64_t FrontierPower::BuildTimeline(const std::vector<int64_t>& durations, const std::vector<double>& excess_w) const {
  const int64_t makespan = Schedule(durations, start_);
  // Two steps per computation (2v its start, 2v + 1 its end), in time order. Consecutive
  // points of a frontier move few steps past each other, so the order of the point before
  // is sorted again by insertion, nearly linear; when that would take long (the first point,
  // a point far from the one before) the steps are sorted from scratch. Ties go by step
  // number, so the order, hence every sum below, is the same however the point was reached
  // (one sweep or ranges on threads give the same bits).
  const size_t n = 2 * durations.size();
  time_.resize(n);
  for (size_t v = 0; v < durations.size(); ++v) {
    time_[2 * v] = start_[v];
    time_[2 * v + 1] = start_[v] + durations[v];
  }
  bool sorted = order_.size() == n;
  if (sorted) {
    size_t moves = 0;
    const size_t budget = 8 * n;
    for (size_t i = 1; i < n && sorted; ++i) {
      const uint32_t id = order_[i];
      const int64_t t = time_[id];
      size_t j = i;
      for (; j > 0 && (time_[order_[j - 1]] > t || (time_[order_[j - 1]] == t && order_[j - 1] > id)); --j) {
        order_[j] = order_[j - 1];
      }
      order_[j] = id;
      moves += i - j;
      sorted = moves <= budget;
    }
  }
  if (!sorted) {
    order_.resize(n);
    for (size_t i = 0; i < n; ++i) order_[i] = static_cast<uint32_t>(i);
    std::sort(order_.begin(), order_.end(),
              [&](uint32_t a, uint32_t b) { return time_[a] < time_[b] || (time_[a] == time_[b] && a < b); });
  }
  // The step function as breakpoints B[0] = 0 < ... < B[m] = T with the rate on
  // [B[j], B[j+1]) and the integral F(B[j]) in watt-units; steps at the same time are one.
  breakpoints_.assign(1, 0.0);
  rates_.assign(1, blocking_power_w_);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t id = order_[i];
    const int64_t t = time_[id];
    if (t >= makespan) break;
    const double delta = id % 2 == 0 ? excess_w[id / 2] : -excess_w[id / 2];
    if (static_cast<double>(t) == breakpoints_.back()) {
      rates_.back() += delta;
    } else {
      breakpoints_.push_back(static_cast<double>(t));
      rates_.push_back(rates_.back() + delta);
    }
  }
  const size_t m = breakpoints_.size();
  breakpoints_.push_back(static_cast<double>(makespan));
  rates_.push_back(0);
  integral_.assign(m + 1, 0.0);
  for (size_t j = 0; j < m; ++j) integral_[j + 1] = integral_[j] + rates_[j] * (breakpoints_[j + 1] - breakpoints_[j]);
  return makespan;
}

double FrontierPower::PeakOfTimeline(int64_t makespan_units, double window_units) const {
  const auto period = static_cast<double>(makespan_units);
  const size_t m = breakpoints_.size() - 1;
  const double iteration = integral_[m];
  if (makespan_units <= 0) return blocking_power_w_;

  // Whole iterations in the window, and the part W' in [0, T) that is left.
  const double whole = std::floor(window_units / period);
  const double part = window_units - whole * period;
  double best = 0;
  if (part > 0) {
    // F(t) for t in [0, T], t not decreasing between calls of one cursor.
    struct Cursor {
      const FrontierPower& self;
      size_t j = 0;
      double At(double t) {
        while (j + 1 < self.breakpoints_.size() && self.breakpoints_[j + 1] <= t) ++j;
        return self.integral_[j] + self.rates_[j] * (t - self.breakpoints_[j]);
      }
    };
    // The integral over [a, a + W'] with a in [0, T), the periodic extension past T.
    best = -std::numeric_limits<double>::infinity();
    // Windows that start at a step.
    Cursor inside{*this}, wrapped{*this};
    for (size_t j = 0; j < m; ++j) {
      const double a = breakpoints_[j];
      const double end = a + part;
      const double to_end = end <= period ? inside.At(end) : iteration + wrapped.At(end - period);
      best = std::max(best, to_end - integral_[j]);
    }
    // Windows that end at a step: first the ends in [W', T], then those past T.
    Cursor from{*this};
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t j = 0; j <= m; ++j) {
        const double b = breakpoints_[j];
        const bool past = b < part;
        if (past != (pass == 1) || (pass == 1 && j == m)) continue;
        const double end = past ? b + period : b;
        const double a = end - part;
        if (a >= period) continue;
        const double to_end = past ? iteration + integral_[j] : integral_[j];
        best = std::max(best, to_end - from.At(a));
      }
    }
  }
  return (whole * iteration + best) / window_units;
}

Result<std::vector<double>> FrontierPower::ExcessPowers(const std::vector<int64_t>& durations) const {
  if (durations.size() != topological_order_.size()) return Error{"power: wrong number of durations"};
  std::vector<double> excess(durations.size());
  for (size_t v = 0; v < durations.size(); ++v) {
    Result<double> e = ExcessPower(v, durations[v]);
    if (!e.ok()) return e.error();
    excess[v] = *e;
  }
  return excess;
}

Result<PowerTimeline> FrontierPower::Timeline(const std::vector<int64_t>& durations) const {
  Result<std::vector<double>> excess = ExcessPowers(durations);
  if (!excess.ok()) return excess.error();
  const int64_t makespan = BuildTimeline(durations, *excess);
  PowerTimeline timeline;
  for (size_t j = 0; j + 1 < breakpoints_.size(); ++j) {
    timeline.time_s.push_back(breakpoints_[j] * unit_time_s_);
    timeline.power_w.push_back(rates_[j]);
  }
  timeline.time_s.push_back(static_cast<double>(makespan) * unit_time_s_);
  return timeline;
}

Result<double> FrontierPower::PeakPower(const std::vector<int64_t>& durations, double window_s) const {
  if (!(window_s > 0) || !std::isfinite(window_s)) return Error{"power: the window must be a positive time"};
  Result<std::vector<double>> excess = ExcessPowers(durations);
  if (!excess.ok()) return excess.error();
  const int64_t makespan = BuildTimeline(durations, *excess);
  return PeakOfTimeline(makespan, window_s / unit_time_s_);
}

Status FrontierPower::SetPeakPowersOf(DurationFrontier& frontier, size_t begin, size_t end, double window_s) const {
  // Start from point `begin`'s durations (the frontier's checkpoints), then follow the changes.
  std::vector<int64_t> durations = frontier.DurationsAt(begin);
  Result<std::vector<double>> excess = ExcessPowers(durations);
  if (!excess.ok()) return excess.error();
  const double window_units = window_s / unit_time_s_;
  for (size_t i = begin; i < end; ++i) {
    if (i > begin) {
      for (const DurationChange& c : frontier.ChangesAt(i)) {
        const auto v = static_cast<size_t>(c.computation);
        durations[v] = c.duration_units;
        Result<double> e = ExcessPower(v, c.duration_units);
        if (!e.ok()) return e.error();
        (*excess)[v] = *e;
      }
    }
    const int64_t makespan = BuildTimeline(durations, *excess);
    frontier.SetPeakPower(i, PeakOfTimeline(makespan, window_units));
  }
  return Status::Ok();
}

Status FrontierPower::SetPeakPowers(DurationFrontier& frontier, double window_s, int threads) const {
  if (!(window_s > 0) || !std::isfinite(window_s)) return Error{"power: the window must be a positive time"};
  const size_t points = frontier.points().size();
  if (points == 0) return Status::Ok();
  // Ranges of points, one per thread, each on its own copy (the scratch space is per object);
  // each thread sets only its own points' power.
  const size_t ranges = std::clamp<size_t>(static_cast<size_t>(std::max(threads, 1)), 1, (points + 999) / 1000);
  std::vector<Status> results(ranges);
  std::vector<std::thread> workers;
  for (size_t r = 1; r < ranges; ++r) {
    workers.emplace_back([&, r, copy = *this]() {
      results[r] = copy.SetPeakPowersOf(frontier, r * points / ranges, (r + 1) * points / ranges, window_s);
    });
  }
  results[0] = SetPeakPowersOf(frontier, 0, points / ranges, window_s);
  for (std::thread& worker : workers) worker.join();
  for (const Status& result : results) {
    if (!result.ok()) return result;
  }
  return Status::Ok();
}

Result<Frontier> ComputeFrontierWithPeakPowers(const Profile& profile, const PlannerOptions& options, int threads) {
  Result<PlanningProblem> planning = BuildPlanningProblem(profile, options);
  if (!planning.ok()) return planning.error();
  Result<Frontier> frontier = SolveFrontier(*planning);
  if (!frontier.ok()) return frontier.error();
  Result<FrontierPower> power = FrontierPower::Create(*frontier, planning->problem);
  if (!power.ok()) return power.error();
  if (Status s = power->SetPeakPowers(*frontier, kPeakPowerWindowS, threads); !s.ok()) return s.error();
  return frontier;
}

Result<Frontier> ComputeFrontierWithPeakPowersFromDeviceProfile(const Profile& per_device,
                                                                const PlannerOptions& options, int threads) {
  if (options.virtual_stages <= 1) return ComputeFrontierWithPeakPowers(per_device, options, threads);
  Result<Profile> chunks = RepeatDeviceRowsPerChunk(per_device, options.virtual_stages);
  if (!chunks.ok()) return chunks.error();
  return ComputeFrontierWithPeakPowers(*chunks, options, threads);
}

}  // namespace wattcut
