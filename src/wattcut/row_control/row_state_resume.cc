#include "wattcut/row_control/row_state_resume.h"

namespace wattcut::row_control {

std::string CeilingReason(const RowPolicyState& state) {
  return "polca level=" + polca::LevelName(state.level) + " brake=" + (state.brake ? "on" : "off");
}

std::optional<RowPolicyState> ParseCeilingReason(const std::string& reason) {
  for (polca::PolicyLevel level : {polca::PolicyLevel::kNormal, polca::PolicyLevel::kT1, polca::PolicyLevel::kT2Low,
                                   polca::PolicyLevel::kT2High}) {
    for (bool brake : {false, true}) {
      if (CeilingReason({level, brake}) == reason) return RowPolicyState{level, brake};
    }
  }
  return std::nullopt;
}

RowPolicyState ResumeState(const std::vector<ObservedCeiling>& ceilings) {
  RowPolicyState state;
  double best_left_s = -1;
  for (const ObservedCeiling& c : ceilings) {
    const std::optional<RowPolicyState> parsed = ParseCeilingReason(c.reason);
    if (parsed && c.expires_in_s > best_left_s) {
      best_left_s = c.expires_in_s;
      state = *parsed;
    }
  }
  return state;
}

}  // namespace wattcut::row_control
