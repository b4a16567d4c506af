// A profile of S stages re-cut into S x V model chunks for the interleaved schedule, when
// only the per-stage profile exists: stage s becomes the chunks s*V .. s*V + V - 1 (model
// order), each with 1/V of the stage's time and energy at every frequency (its layers
// divided evenly; a chunk's fixed per-computation overheads are not modelled). A profile
// measured per chunk (S x V stages) needs no split.
#pragma once

#include "wattcut/base/result.h"
#include "wattcut/profile/profile.h"

namespace wattcut {

// Fails on chunks < 1. With chunks == 1 the profile itself.
Result<Profile> SplitStagesIntoChunks(const Profile& profile, int chunks);

}  // namespace wattcut
