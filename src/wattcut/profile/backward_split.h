// The backward of a profile split into the zero-bubble passes, for a profile that measured
// only the whole backward: backward_input (B, the input gradient) and backward_weight (W,
// the weight gradient) each take half of the backward's time and half of its energy, at
// every measured frequency. The halves are an assumption (in transformer layers B and W
// each do about half of the backward's matrix multiplications, Qi et al., ICLR 2024,
// table 1); a profile that measures B and W keeps its own rows.
#pragma once

#include "wattcut/profile/profile.h"

namespace wattcut {

// Whether some stage has backward rows and neither backward_input nor backward_weight rows.
bool NeedsBackwardSplit(const Profile& profile);

// The profile with, at every stage that has backward rows and neither backward_input nor
// backward_weight rows, both filled with the halves of its backward rows.
Profile WithSplitBackward(const Profile& profile);

}  // namespace wattcut
