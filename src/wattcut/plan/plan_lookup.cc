#include "wattcut/plan/plan_lookup.h"

#include <cmath>
#include <string>

#include "wattcut/base/general_text.h"

namespace wattcut {
namespace {

Status CheckNotEmpty(const DurationFrontier& frontier) {
  if (frontier.points().empty()) return Error{"the frontier has no points"};
  return Status::Ok();
}

// Power per GPU needs devices to divide by; a DAG file may name none.
Status CheckDevices(const DurationFrontier& frontier) {
  if (frontier.num_devices() > 0) return Status::Ok();
  return Error{
      "this frontier's DAG names no devices, so it has no power per GPU: give its operations devices "
      "(\"devices\" and each operation's \"device\" in the wattcut.dag/v1 file)"};
}

std::string PointText(const DurationFrontier& frontier, size_t index) {
  return "plan " + std::to_string(index) + ", " + GeneralText(frontier.points()[index].time_s) + " s";
}

}  // namespace

double AveragePowerW(const FrontierPoint& point) { return point.time_s > 0 ? point.energy_j / point.time_s : 0.0; }

double AveragePowerPerGpuW(const DurationFrontier& frontier, size_t index) {
  const int devices = frontier.num_devices();
  return devices > 0 ? AveragePowerW(frontier.points().at(index)) / devices : 0.0;
}

std::optional<double> PeakPowerPerGpuW(const DurationFrontier& frontier, size_t index) {
  const std::optional<double>& peak = frontier.points().at(index).peak_1s_power_w;
  if (!peak || frontier.num_devices() <= 0) return std::nullopt;
  return *peak / frontier.num_devices();
}

Result<size_t> PointByIndex(const DurationFrontier& frontier, int64_t index) {
  if (Status s = CheckNotEmpty(frontier); !s.ok()) return s.error();
  const auto points = static_cast<int64_t>(frontier.points().size());
  if (index < 0 || index >= points) {
    return Error{"point " + std::to_string(index) + " is not on the frontier: its points are 0.." +
                 std::to_string(points - 1)};
  }
  return static_cast<size_t>(index);
}

Result<size_t> PointForIterationTime(const DurationFrontier& frontier, double time_s) {
  if (Status s = CheckNotEmpty(frontier); !s.ok()) return s.error();
  if (!std::isfinite(time_s) || time_s <= 0) {
    return Error{"iteration time: expected a number of seconds > 0, got " + GeneralText(time_s)};
  }
  const size_t fastest = frontier.fastest_index();
  const double t_min = frontier.points()[fastest].time_s;
  // The same tolerance as Frontier::IndexForIterationTime's.
  if (time_s + 1e-12 < t_min) {
    return Error{"no plan is as fast as " + GeneralText(time_s) + " s: the fastest, T_min, takes " +
                 GeneralText(t_min) + " s (plan " + std::to_string(fastest) + ")"};
  }
  return frontier.IndexForIterationTime(time_s);
}

Result<size_t> PointForSlowdown(const DurationFrontier& frontier, double slowdown) {
  if (Status s = CheckNotEmpty(frontier); !s.ok()) return s.error();
  if (!std::isfinite(slowdown) || slowdown < 1) {
    return Error{"slowdown: expected a factor >= 1 of T_min, got " + GeneralText(slowdown)};
  }
  return PointForIterationTime(frontier, slowdown * frontier.points()[frontier.fastest_index()].time_s);
}

Result<size_t> PointForPowerPerGpu(const DurationFrontier& frontier, double watts) {
  if (Status s = CheckNotEmpty(frontier); !s.ok()) return s.error();
  if (!std::isfinite(watts) || watts <= 0) {
    return Error{"power per GPU: expected a number of watts > 0, got " + GeneralText(watts)};
  }
  if (Status s = CheckDevices(frontier); !s.ok()) return s.error();
  // Points run slowest -> fastest: the first from the end that fits is the fastest.
  size_t lowest = frontier.fastest_index();
  for (size_t i = frontier.points().size(); i-- > 0;) {
    const double power = AveragePowerPerGpuW(frontier, i);
    if (power <= watts) return i;
    if (power < AveragePowerPerGpuW(frontier, lowest)) lowest = i;
  }
  return Error{"no plan draws " + GeneralText(watts) + " W per GPU or less on average: the lowest is " +
               GeneralText(AveragePowerPerGpuW(frontier, lowest), 6) + " W per GPU (" + PointText(frontier, lowest) +
               ")"};
}

Result<size_t> PointForPeakPowerPerGpu(const DurationFrontier& frontier, double watts) {
  if (Status s = CheckNotEmpty(frontier); !s.ok()) return s.error();
  if (!std::isfinite(watts) || watts <= 0) {
    return Error{"peak power per GPU: expected a number of watts > 0, got " + GeneralText(watts)};
  }
  if (Status s = CheckDevices(frontier); !s.ok()) return s.error();
  for (const FrontierPoint& p : frontier.points()) {
    if (!p.peak_1s_power_w) {
      return Error::NotFound(
          "this frontier has no peak 1-s power (a file written without it): compute it again with wattcut frontier");
    }
  }
  auto peak = [&](size_t i) { return *PeakPowerPerGpuW(frontier, i); };
  size_t lowest = frontier.fastest_index();
  for (size_t i = frontier.points().size(); i-- > 0;) {
    if (peak(i) <= watts) return i;
    if (peak(i) < peak(lowest)) lowest = i;
  }
  return Error{"no plan's peak 1-s power is " + GeneralText(watts) + " W per GPU or less: the lowest is " +
               GeneralText(peak(lowest), 6) + " W per GPU (" + PointText(frontier, lowest) + ")"};
}

Result<size_t> LookUpPlan(const DurationFrontier& frontier, const PlanQuery& query) {
  switch (query.kind) {
    case PlanQuery::Kind::kPoint:
      if (!std::isfinite(query.value) || query.value != std::floor(query.value) || std::fabs(query.value) > 1e15) {
        return Error{"point: expected an integer index, got " + GeneralText(query.value)};
      }
      return PointByIndex(frontier, static_cast<int64_t>(query.value));
    case PlanQuery::Kind::kIterationTime:
      return PointForIterationTime(frontier, query.value);
    case PlanQuery::Kind::kSlowdown:
      return PointForSlowdown(frontier, query.value);
    case PlanQuery::Kind::kPowerPerGpu:
      return PointForPowerPerGpu(frontier, query.value);
    case PlanQuery::Kind::kPeakPowerPerGpu:
      return PointForPeakPowerPerGpu(frontier, query.value);
  }
  return Error{"unknown plan query"};
}

}  // namespace wattcut
