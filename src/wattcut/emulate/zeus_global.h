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

#include <vector>

#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/profile/profile.h"

namespace wattcut {

struct UniformFrequencyPlan {
  int freq_mhz = 0;
  double iteration_time_s = 0;
  double energy_j = 0;  // one pipeline, computations plus blocking until deadline_s
};

// The candidates (the highest frequency and every commonly Pareto-optimal one) are run
// once, at construction: their iteration times and computation energies do not depend
// on the deadline, so one ZeusGlobal serves every straggler slowdown.
class ZeusGlobal {
 public:
  ZeusGlobal(const Profile& profile, const PipelineSchedule& schedule, double p2p_power_w);

  // The highest frequency, unless a candidate that fits in `deadline_s` takes less
  // energy (blocking until the deadline included); the least-energy such candidate.
  UniformFrequencyPlan Plan(double deadline_s) const;

 private:
  struct Candidate {
    int freq_mhz = 0;
    double iteration_time_s = 0;
    double compute_energy_j = 0;
    std::vector<double> stage_compute_s;
  };
  UniformFrequencyPlan Evaluate(const Candidate& candidate, double deadline_s) const;

  double p2p_power_w_;
  Candidate highest_;              // the profile's highest frequency
  std::vector<Candidate> common_;  // ascending frequency
};

}  // namespace wattcut
