// A job's power target (PUT / DELETE / GET /v1/jobs/{id}/power_target): set, cleared, lapsed when
// its lease runs out, and viewed (the answer, the status page's line, the /metrics gauges all
// from one PowerTargetView).
#pragma once

#include <optional>
#include <string>

#include "wattcut/server/deployment.h"
#include "wattcut/server/job.h"
#include "wattcut/server/job_context.h"
#include "wattcut/server/metrics.h"
#include "wattcut/server/status_page.h"

namespace wattcut::server {

// What a job's power target does now, as every view shows it.
struct PowerTargetView {
  std::string job_id;
  std::optional<PowerTarget> target;
  FrontierState frontier_state = FrontierState::kNone;
  std::shared_ptr<const Frontier> frontier;  // set when ready
  size_t selected = 0;                       // the selected point, when ready
  Deployment deployment;
  std::optional<int64_t> ranks_min_step;
  // With a target and a ready frontier: the point it gives, and whether every pipeline's
  // deployed point is at or below the target.
  std::optional<PowerCapPoint> cap;
  bool met = false;
  bool applied() const { return target && frontier; }
};

PowerTargetView ViewPowerTarget(Job& job) REQUIRES(job.mu());
// GET /v1/jobs/{id}/power_target's answer.
nlohmann::json PowerTargetJson(const PowerTargetView& view);
StatusPowerTargetView StatusPowerTarget(const PowerTargetView& view);
PowerTargetGauge PowerTargetGaugeOf(const PowerTargetView& view);

// GET /v1/jobs/{id}/power_target.
Answer GetPowerTarget(Job& job) REQUIRES(job.mu());

// Stores `target` as the job's power target (none: cleared; a lease's expiry set from the wall
// clock) and redeploys; answers as GET does.
Answer ChangePowerTarget(Job& job, JobContext& ctx, std::optional<PowerTarget> target) REQUIRES(job.mu());

// A target whose lease ran out is cleared as if DELETEd (stored, a new deployment). Called by the
// registry's lapse timer and at the job's next write (a round, a deployment poll); never by a
// read. A store that fails keeps it, and the next call tries again.
void LapsePowerTarget(Job& job, JobContext& ctx) REQUIRES(job.mu());

}  // namespace wattcut::server
