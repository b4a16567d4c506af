#include "wattcut/row_control/row_state_resume.h"

#include <gtest/gtest.h>

namespace wattcut::row_control {
namespace {

using polca::PolicyLevel;

TEST(RowStateResume, EveryStateRoundTripsThroughItsReason) {
  for (PolicyLevel level : {PolicyLevel::kNormal, PolicyLevel::kT1, PolicyLevel::kT2Low, PolicyLevel::kT2High}) {
    for (bool brake : {false, true}) {
      const RowPolicyState state{level, brake};
      EXPECT_EQ(ParseCeilingReason(CeilingReason(state)), state) << CeilingReason(state);
    }
  }
  EXPECT_EQ(CeilingReason({PolicyLevel::kT2Low, false}), "polca level=t2-low brake=off");
  EXPECT_EQ(ParseCeilingReason("brake"), std::nullopt) << "a ceiling someone else set is not ours";
  EXPECT_EQ(ParseCeilingReason(""), std::nullopt);
}

TEST(RowStateResume, TheLatestCeilingDecides) {
  EXPECT_EQ(ResumeState({}), RowPolicyState{});
  const std::vector<ObservedCeiling> ceilings = {
      {"polca level=t1 brake=off", 12},      // an older command's, on a server that missed the latest
      {"polca level=t2-high brake=on", 29},  // the latest one
      {"an operator's own ceiling", 100},    // not ours: ignored
  };
  EXPECT_EQ(ResumeState(ceilings), (RowPolicyState{PolicyLevel::kT2High, true}));
}

}  // namespace
}  // namespace wattcut::row_control
