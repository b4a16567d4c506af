// The training job of a row's training servers, as the row simulator runs it: one pipeline per
// server (server.gpus / training.stages tensor-parallel GPUs per stage), its power over one
// iteration for every way the row's policy can make it run, from a stage profile
// (docs/polca.md, "Training servers"):
//   * AllMax, the unmanaged job: every computation at its highest measured clock;
//   * a uniform clock lock at every clock the profile measured for every computation
//     (emulate/power_sweep.h's UniformLockTimelines): what a lock or the brake makes it run;
//   * the frontier plans the power targets give (plan/plan_lookup.h, PointForPeakPowerPerGpu:
//     the fastest plan whose peak 1-s power per GPU is <= the target, else the lowest-peak plan),
//     and the fastest plan, which the job runs with no target.
// Each pipeline timeline (plan/frontier_power.h) becomes a server timeline: its GPU power
// x tensor parallelism, plus the server's other power (other_idle_w + other_w_per_gpu_w per GPU
// watt, as for inference servers), averaged over steps of training.timeline_step_s so that a
// server needs a few events per second instead of one per computation.
#pragma once

#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/plan/frontier_power.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/training_server.h"

namespace wattcut::polca {

struct TrainingJob {
  std::string description;  // "PROFILE, 8 stages x 96 microbatches, 1f1b"
  int stages = 0;
  int tensor_parallel = 1;
  TrainingTimeline all_max;
  std::vector<TrainingTimeline> locks;  // one per swept clock, lowest clock first
  std::vector<TrainingTimeline> plans;  // the frontier plans below, fastest first, no duplicates
  // The plan of each power target in `targets_w` (its index in plans) and whether it is met.
  std::vector<double> targets_w;
  std::vector<size_t> target_plan;
  std::vector<bool> target_met;
  size_t fastest_plan = 0;  // index in plans
  // What the user should know: clocks left out, a profile whose clocks are not the GPU's.
  std::vector<std::string> warnings;

  // What a target gives: the fastest plan of `plans` whose peak per GPU is <= target_w, else
  // the lowest-peak one (`met` false). For the targets the job was built with, this is the
  // frontier's answer.
  const TrainingTimeline& PlanFor(double target_w, bool* met) const;
  // What a clock limit makes the job run: the uniform lock at the largest swept clock <= freq_mhz
  // (the lowest when every clock is higher), lower still while its peak per GPU is above cap_w
  // (> 0; the lowest clock when none is that low); nullptr when freq_mhz is at or above the
  // highest swept clock and there is no cap: no limit.
  const TrainingTimeline* LockFor(double freq_mhz, double cap_w) const;
  // The brake: the lowest swept clock.
  const TrainingTimeline& Brake() const { return locks.front(); }
};

// A pipeline timeline (one GPU per stage, the profile's times) as a server's, averaged over
// steps of `step_s` (the last one shorter; energy kept exactly).
TrainingTimeline ServerTimeline(const std::string& name, const PowerTimeline& pipeline, double peak_pipeline_w,
                                int stages, int tensor_parallel, const ServerSpec& server, double step_s);

// The job of `config.training` (its profile read, its frontier computed), with the plans of
// policy.t1_training_w and policy.t2_training_w. Errors name the profile and the key.
Result<TrainingJob> BuildTrainingJob(const PolcaConfig& config);

}  // namespace wattcut::polca
