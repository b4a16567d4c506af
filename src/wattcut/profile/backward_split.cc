#include "wattcut/profile/backward_split.h"

namespace wattcut {

namespace {

bool StageNeedsSplit(const Profile& profile, int stage) {
  return !profile.measurements(stage, InstructionKind::kBackward).empty() &&
         profile.measurements(stage, InstructionKind::kBackwardInput).empty() &&
         profile.measurements(stage, InstructionKind::kBackwardWeight).empty();
}

}  // namespace

bool NeedsBackwardSplit(const Profile& profile) {
  for (int s = 0; s < profile.num_stages(); ++s) {
    if (StageNeedsSplit(profile, s)) return true;
  }
  return false;
}

Profile WithSplitBackward(const Profile& profile) {
  Profile out = profile;
  for (int s = 0; s < profile.num_stages(); ++s) {
    if (!StageNeedsSplit(profile, s)) continue;
    for (const Measurement& m : profile.measurements(s, InstructionKind::kBackward)) {
      const Measurement half{m.freq_mhz, m.time_s / 2, m.energy_j / 2};
      out.mutable_measurements(s, InstructionKind::kBackwardInput).push_back(half);
      out.mutable_measurements(s, InstructionKind::kBackwardWeight).push_back(half);
    }
  }
  return out;
}

}  // namespace wattcut
