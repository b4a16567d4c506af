// The AllMax baseline (PERSEUS.md section 7): every computation at the profile's highest
// frequency, and each stage's GPU blocked at blocking power for the rest of the iteration.
// Any schedule: a device's chunk is its profile stage (ProfileStageOf), and a split
// backward the profile did not measure is half the backward (profile/backward_split.h).
#pragma once

#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/profile/profile.h"

namespace wattcut {

// Time of one iteration with every computation at its highest frequency (longest path
// of the schedule's DAG with the fastest measured times).
double AllMaxIterationTime(const Profile& profile, const PipelineSchedule& schedule);

// Energy of one pipeline iteration of length `iteration_time_s` under AllMax: the sum of
// every computation's energy at the highest frequency plus, per stage (device),
// p2p_power_w * (iteration_time_s - that device's compute time).
double AllMaxEnergy(const Profile& profile, const PipelineSchedule& schedule, double iteration_time_s,
                    double p2p_power_w);

}  // namespace wattcut
