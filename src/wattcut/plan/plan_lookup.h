// Looking up one plan of a frontier the ways users ask for one: by point index, by the
// iteration time it must not exceed, by a slowdown against the fastest plan, or by the
// average or peak 1-s power per GPU it must not exceed. `wattcut plan show`, Python's
// wattcut.Frontier.plan and the planning server use these rules; the time rule is
// Frontier::IndexForIterationTime's (the least-energy point no slower than T), the one the
// server deploys for a straggler, written once.
//
// Every bad query is an error naming what was asked and what the frontier offers (its
// point count, T_min, the lowest power), never a silently different plan.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "wattcut/base/result.h"
#include "wattcut/plan/duration_frontier.h"

namespace wattcut {

// Average power of a point over one iteration: energy_j / time_s, the whole pipeline's
// (blocking power included, one GPU per stage, unscaled by tensor parallelism as the
// energy is); 0 for a point of zero time.
double AveragePowerW(const FrontierPoint& point);
// AveragePowerW divided by the frontier's devices (a pipeline's stages, one GPU each; a
// DAG's devices); 0 when it has none.
double AveragePowerPerGpuW(const DurationFrontier& frontier, size_t index);
// Point `index`'s peak 1-s power divided by the frontier's devices; absent when the point has
// no peak power (a file written without it) or the frontier no devices.
std::optional<double> PeakPowerPerGpuW(const DurationFrontier& frontier, size_t index);

// Point `index` itself; an error when it is not in [0, points).
Result<size_t> PointByIndex(const DurationFrontier& frontier, int64_t index);
// The least-energy point no slower than `time_s` (Frontier::IndexForIterationTime); an
// error naming T_min when time_s is faster than every point.
Result<size_t> PointForIterationTime(const DurationFrontier& frontier, double time_s);
// PointForIterationTime(slowdown * T_min); slowdown must be >= 1.
Result<size_t> PointForSlowdown(const DurationFrontier& frontier, double slowdown);
// The fastest point whose average power per GPU is <= `watts`; an error naming the lowest
// average power per GPU on the frontier when no point draws that little, or saying the
// frontier has no devices (a DAG file that names none) to divide its power by.
Result<size_t> PointForPowerPerGpu(const DurationFrontier& frontier, double watts);

// The fastest point whose peak 1-s power per GPU (peak_1s_power_w / devices) is <= `watts`;
// an error naming the lowest when none is, or saying the frontier has no peak power (a file
// written without it).
Result<size_t> PointForPeakPowerPerGpu(const DurationFrontier& frontier, double watts);

// One query, as the CLI and Python pass it.
struct PlanQuery {
  enum class Kind { kPoint, kIterationTime, kSlowdown, kPowerPerGpu, kPeakPowerPerGpu };
  Kind kind = Kind::kPoint;
  double value = 0;  // the point index, seconds, the factor, or watts
};
Result<size_t> LookUpPlan(const DurationFrontier& frontier, const PlanQuery& query);

}  // namespace wattcut
