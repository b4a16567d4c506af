#include "wattcut/gpu/clock_lock_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/joined_text.h"

namespace wattcut {
namespace {

// Watts above which a power limit is not a number a GPU could have (and has no int64 milliwatts).
constexpr double kPowerLimitBoundW = 1e6;

Status CheckRequest(const ClockLockRequest& request) {
  std::vector<std::string> problems;
  if (request.sm_min_mhz < 0 || request.sm_max_mhz < 0) {
    problems.push_back("sm_min_mhz and sm_max_mhz must be positive MHz");
  } else if (request.sm_min_mhz == 0 && request.sm_max_mhz > 0) {
    problems.push_back("sm_max_mhz needs sm_min_mhz (the lower bound)");
  } else if (request.sm_min_mhz > 0 && request.sm_max_mhz < request.sm_min_mhz) {
    problems.push_back("sm_max_mhz " + std::to_string(request.sm_max_mhz) + " is below sm_min_mhz " +
                       std::to_string(request.sm_min_mhz));
  }
  if (request.power_limit_w) {
    const double w = *request.power_limit_w;
    if (!(std::isfinite(w) && w > 0 && w < kPowerLimitBoundW)) {
      char shown[32];
      std::snprintf(shown, sizeof shown, "%g", w);
      problems.push_back(std::string("power_limit_w: expected a positive number of watts below 1000000, got ") + shown);
    }
  }
  if (request.sm_min_mhz == 0 && request.sm_max_mhz == 0 && !request.memory_max && !request.power_limit_w) {
    problems.push_back("nothing to lock: the request sets no SM clock, memory clock or power limit");
  }
  if (!problems.empty()) return Error{Joined(problems, "; ")};
  return Status::Ok();
}

ClockLockChange Change(ClockLockChange::Kind kind, int gpu) {
  ClockLockChange change;
  change.kind = kind;
  change.gpu = gpu;
  return change;
}

std::optional<int> Reading(const Result<int>& value) { return value.ok() ? std::optional<int>(*value) : std::nullopt; }

}  // namespace

Result<std::vector<ClockLockPlan>> PlanClockLock(GpuBackend& b, const std::vector<int>& gpus,
                                                 const ClockLockRequest& request) {
  if (Status s = CheckRequest(request); !s.ok()) return s.error();
  const int64_t limit_mw =
      request.power_limit_w ? static_cast<int64_t>(std::llround(*request.power_limit_w * 1000)) : 0;
  std::vector<std::string> problems;
  std::vector<ClockLockPlan> plans;
  for (int gpu : gpus) {
    const std::string who = "GPU " + std::to_string(gpu) + ": ";
    ClockLockPlan plan;
    plan.gpu = gpu;
    if (request.sm_min_mhz > 0) {
      plan.sm_min_mhz = request.sm_min_mhz;
      plan.sm_max_mhz = request.sm_max_mhz;
      auto clocks = SupportedSmClocksMhz(b, gpu);
      if (!clocks.ok() || clocks->empty()) {
        problems.push_back(who + "cannot read the supported SM clocks: " +
                           (clocks.ok() ? std::string("the list is empty") : clocks.error().message));
      } else {
        const auto [lowest, highest] = std::minmax_element(clocks->begin(), clocks->end());
        if (request.sm_min_mhz < *lowest || request.sm_max_mhz > *highest) {
          problems.push_back(who + "SM clocks " + std::to_string(request.sm_min_mhz) + "-" +
                             std::to_string(request.sm_max_mhz) + " MHz are outside the supported " +
                             std::to_string(*lowest) + "-" + std::to_string(*highest) + " MHz");
        }
      }
    }
    if (request.memory_max) {
      auto memory = MaxMemoryClockMhz(b, gpu);
      if (memory.ok()) {
        plan.memory_mhz = *memory;
      } else {
        problems.push_back(who + "cannot read the memory clocks: " + memory.error().message);
      }
    }
    if (request.power_limit_w) {
      auto limits = b.PowerLimits(gpu);
      auto current = b.PowerLimitMw(gpu);
      if (!limits.ok()) {
        problems.push_back(who + "cannot read the power-limit range: " + limits.error().message);
      } else if (!current.ok()) {
        problems.push_back(
            who + "cannot read the power limit now (needed to undo a failed lock): " + current.error().message);
      } else if (limit_mw < limits->min_mw || limit_mw > limits->max_mw) {
        problems.push_back(who + "power limit " + FixedDecimals(*request.power_limit_w, 1) +
                           " W is outside the allowed " + FixedDecimals(limits->min_mw / 1000.0, 1) + "-" +
                           FixedDecimals(limits->max_mw / 1000.0, 1) + " W");
      } else {
        plan.power_limit_mw = limit_mw;
        plan.previous_power_limit_mw = *current;
      }
    }
    plans.push_back(plan);
  }
  if (!problems.empty()) return Error{Joined(problems, "; ") + " (nothing was changed)"};
  return plans;
}

Status ApplyClockLock(GpuBackend& b, const std::vector<ClockLockPlan>& plans,
                      const std::function<void(const ClockLockChange&)>& on_change) {
  std::vector<ClockLockChange> applied;
  auto fail = [&](const Status& step) {
    return Status(Error{step.error().message + "; " + RollBackClockLock(b, applied)});
  };
  auto made = [&](const ClockLockChange& change) {
    applied.push_back(change);
    if (on_change) on_change(applied.back());
  };
  for (const ClockLockPlan& plan : plans) {
    if (plan.sm_min_mhz > 0) {
      ClockLockChange change = Change(ClockLockChange::kSmClocks, plan.gpu);
      change.sm_min_mhz = plan.sm_min_mhz;
      change.sm_max_mhz = plan.sm_max_mhz;
      change.sm_clock_before_mhz = Reading(b.SmClockMhz(plan.gpu));
      if (Status s = b.LockGpuClocks(plan.gpu, plan.sm_min_mhz, plan.sm_max_mhz); !s.ok()) return fail(s);
      change.sm_clock_after_mhz = Reading(b.SmClockMhz(plan.gpu));
      made(change);
    }
    if (plan.memory_mhz) {
      if (Status s = b.LockMemoryClocks(plan.gpu, *plan.memory_mhz, *plan.memory_mhz); !s.ok()) return fail(s);
      ClockLockChange change = Change(ClockLockChange::kMemoryClocks, plan.gpu);
      change.memory_mhz = *plan.memory_mhz;
      made(change);
    }
    if (plan.power_limit_mw) {
      if (Status s = b.SetPowerLimitMw(plan.gpu, *plan.power_limit_mw); !s.ok()) return fail(s);
      ClockLockChange change = Change(ClockLockChange::kPowerLimit, plan.gpu);
      change.power_limit_mw = *plan.power_limit_mw;
      change.previous_power_limit_mw = plan.previous_power_limit_mw;
      made(change);
    }
  }
  return Status::Ok();
}

std::string RollBackClockLock(GpuBackend& b, const std::vector<ClockLockChange>& applied) {
  if (applied.empty()) return "nothing had been changed";
  std::vector<std::string> undone, failed;
  for (auto it = applied.rbegin(); it != applied.rend(); ++it) {
    const std::string who = "GPU " + std::to_string(it->gpu) + " ";
    Status s = Status::Ok();
    std::string what;
    switch (it->kind) {
      case ClockLockChange::kSmClocks:
        s = b.ResetGpuClocks(it->gpu);
        what = who + "SM clocks reset";
        break;
      case ClockLockChange::kMemoryClocks:
        s = b.ResetMemoryClocks(it->gpu);
        what = who + "memory clocks reset";
        break;
      case ClockLockChange::kPowerLimit:
        s = b.SetPowerLimitMw(it->gpu, it->previous_power_limit_mw);
        what = who + "power limit restored to " + FixedDecimals(it->previous_power_limit_mw / 1000.0, 1) + " W";
        break;
    }
    if (s.ok()) {
      undone.push_back(what);
    } else {
      failed.push_back(what + " FAILED: " + s.error().message);
    }
  }
  std::string text;
  if (!undone.empty()) text = "rolled back: " + Joined(undone, ", ");
  if (!failed.empty()) {
    text += std::string(text.empty() ? "" : "; ") + "rollback incomplete: " + Joined(failed, ", ") +
            " (run `wattcut gpu reset --power-limit`)";
  }
  return text;
}

}  // namespace wattcut
