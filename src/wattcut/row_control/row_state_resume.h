// How a row's POLCA state is written on its agents, and read back by a restarted controller:
// every ceiling the controller sets carries its whole state in the ceiling's reason,
// "polca level=t2-low brake=off", so the state of the row is on the agents, not in the
// controller (which may die at any time: the ceilings stay until their lease runs out).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "wattcut/polca/row_power_policy.h"

namespace wattcut::row_control {

struct RowPolicyState {
  polca::PolicyLevel level = polca::PolicyLevel::kNormal;
  bool brake = false;
  bool operator==(const RowPolicyState&) const = default;
};

// "polca level=t2-low brake=off".
std::string CeilingReason(const RowPolicyState& state);
// The state a reason describes; nullopt for a reason this controller did not write.
std::optional<RowPolicyState> ParseCeilingReason(const std::string& reason);

// One GPU's ceiling as an agent reports it (GET /v1/state).
struct ObservedCeiling {
  std::string reason;
  double expires_in_s = 0;
};

// The state to resume from: the one in the ceiling with the most lease left (the latest one
// sent), over every server's ceilings; normal when no ceiling of this controller is in force.
RowPolicyState ResumeState(const std::vector<ObservedCeiling>& ceilings);

}  // namespace wattcut::row_control
