// What the planning server tells one rank to run, delivered without a barrier (issue 12): the
// answer of GET /v1/jobs/{job}/deployment?rank=R&step=S&version=V (docs/server.md, "Deployments").
//
//   unchanged (the server's version == V):  {"version": N, "poll_interval_s": P}
//   changed:  {"version": N, "poll_interval_s": P, "apply_from_step": A, "mode": "plan" | "all_max",
//              "plan_index": I (plan only), "frequencies": [["forward", 1410], ...]}
//
// A changed answer is the rank's own stage's instructions in execution order, to run from its
// step A on (the step whose 0-based index is A).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/runtime/schedule_cursor.h"

namespace wattcut {

enum class DeploymentMode {
  kPlan,    // a plan of the frontier
  kAllMax,  // nothing planned (yet): every instruction at the rank's highest clock
};

struct RankDeployment {
  uint64_t version = 0;
  uint64_t apply_from_step = 0;
  DeploymentMode mode = DeploymentMode::kAllMax;
  int plan_index = -1;                          // mode plan only
  std::vector<ScheduleEntry> frequencies = {};  // mode plan: never empty; all_max: may be empty
};

struct DeploymentAnswer {
  uint64_t version = 0;
  double poll_interval_s = 0;
  std::optional<RankDeployment> change = {};  // empty: the rank already runs `version`
};

// The longest poll interval accepted from a server (s); the protocol's largest is 30 s.
inline constexpr double kMaxDeploymentPollIntervalS = 3600;

// Parses and checks an answer to a poll that sent `sent_version`. Fails, naming the field, on
// malformed JSON, a missing or mistyped field, a negative version or apply step, a poll interval
// that is not in (0, 3600] s, an unknown mode, a plan without plan_index or frequencies, a
// frequency that is not ["instruction", positive MHz], or a new version without apply_from_step.
Result<DeploymentAnswer> ParseDeploymentAnswer(std::string_view json, uint64_t sent_version);

}  // namespace wattcut
