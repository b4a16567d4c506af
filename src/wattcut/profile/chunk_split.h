// Per-chunk profiles for the interleaved schedule (pipeline_schedule.h: profile stage
// chunk * devices + device), from profiles that have fewer stages.
//
// SplitStagesIntoChunks: a profile of S stages re-cut into S x V model chunks, when only a
// profile of the whole stages exists (a 1F1B run's): stage s becomes the chunks s*V .. s*V + V - 1 (model
// order), each with 1/V of the stage's time and energy at every frequency (its layers
// divided evenly; a chunk's fixed per-computation overheads are not modelled). A profile
// measured per chunk (S x V stages) needs no split.
#pragma once

#include "wattcut/base/result.h"
#include "wattcut/profile/profile.h"

namespace wattcut {

// Fails on chunks < 1. With chunks == 1 the profile itself.
Result<Profile> SplitStagesIntoChunks(const Profile& profile, int chunks);

// A profile measured per device while the job ran interleaved (each of a rank's
// instructions is one of its chunks' computations, so its rows are a chunk's time and
// energy, averaged over its chunks), as the planner's per-chunk profile: chunk c of device
// d, profile stage c * devices + d, gets device d's rows. Fails on chunks < 1.
Result<Profile> RepeatDeviceRowsPerChunk(const Profile& per_device, int chunks);

}  // namespace wattcut
