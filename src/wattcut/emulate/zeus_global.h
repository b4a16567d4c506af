// A ZeusGlobal-like baseline. Zeus (NSDI '23) sets one GPU power limit for every GPU of
// a job, chosen by its energy-time cost metric. With frequency locking, the same knob is
// one SM frequency for every GPU. This baseline picks, among the frequencies that are
// Pareto-optimal (time, energy) for every (stage, instruction) -- the option space
// Perseus plans over, so both choose among the same settings -- the single frequency
// whose pipeline energy (blocking until the job's iteration time included) is least
// while its iteration time still fits in `deadline_s`. That is Zeus's cost metric with
// all weight on energy under a no-slowdown constraint: the uniform setting that saves
// the most energy without slowing the job.
#pragma once

#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/profile/profile.h"

namespace wattcut {

struct UniformFrequencyPlan {
  int freq_mhz = 0;
  double iteration_time_s = 0;
  double energy_j = 0;  // one pipeline, computations plus blocking until deadline_s
};

// Falls back to the highest frequency when no frequency fits the deadline.
UniformFrequencyPlan PlanZeusGlobal(const Profile& profile, const PipelineSchedule& schedule, double deadline_s,
                                    double p2p_power_w);

}  // namespace wattcut
