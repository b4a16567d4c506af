// The GPU energy a job's steps used, and what its plans saved against AllMax, as the server
// can know them: the planner's estimates, not measurements (measured_gpu_energy.h holds what
// the nodes measured).
//
//   AllMaxReference   the AllMax point (every computation at its highest clock, blocking until
//                     the frontier's fastest time T_min, as the CLI reports it) of a job's
//                     frontier, from the job's profile (plan/all_max.h);
//   StepEnergyJ       what one training step of a deployment target uses: tp_degree x the sum
//                     over the data-parallel pipelines of the energy of the frontier point that
//                     pipeline runs (an AllMax target: the AllMax energy), every
//                     tensor-parallel GPU of a stage taken to use what the profile measured for
//                     the stage;
//   StepSavingJ       what it saves: StepEnergyJ of AllMax minus StepEnergyJ of the target
//                     (0 for an AllMax target);
//   EnergySavingTally the sums of both over the steps the ranks report completing
//                     (GET /v1/jobs/{id}/deployment?step=N; the job's step is the largest
//                     any rank reported), each step at the rates of the target it ran:
//                     a change counts from its apply step on.
// Pure values, no lock and no I/O: the registry holds the job's mutex.
#pragma once

#include <cstdint>
#include <optional>

#include "wattcut/plan/frontier.h"
#include "wattcut/profile/profile.h"
#include "wattcut/server/deployment.h"

namespace wattcut::server {

struct AllMaxPoint {
  double time_s = 0;
  double energy_j = 0;  // one pipeline, blocking energy at the frontier's p2p power included
};

// The AllMax point of `frontier`'s schedule with `per_device_profile` (one stage per pipeline
// device, as the server keeps a job's profile; with virtual_stages > 1 each chunk gets its
// device's rows, as the planner did). nullopt when the profile does not fit the schedule.
std::optional<AllMaxPoint> AllMaxReference(const Profile& per_device_profile, const Frontier& frontier,
                                           int virtual_stages);

// Joules one step of the whole job uses when it runs `target` (see above); nullopt when the
// planner cannot say: a plan's index off `frontier`, or an AllMax target without `all_max`.
std::optional<double> StepEnergyJ(const Frontier& frontier, const std::optional<AllMaxPoint>& all_max,
                                  const DeploymentTarget& target, int dp_degree, int tp_degree);

// Joules one step of the whole job saves against AllMax when it runs `target` (see above); 0
// for AllMax and where StepEnergyJ cannot say.
double StepSavingJ(const Frontier& frontier, const AllMaxPoint& all_max, const DeploymentTarget& target, int dp_degree,
                   int tp_degree);

// What a step of the target deployed from some step on uses and saves: `energy_j` nullopt where
// the planner cannot say (no frontier of the target's, no AllMax point), and `is_plan`: it is a
// plan, not AllMax.
struct StepRate {
  double saving_j = 0;
  std::optional<double> energy_j;
  bool is_plan = false;
};

class EnergySavingTally {
 public:
  // The job has completed `job_step` steps; the target deployed now runs at `rate` from step
  // `from_step` on, the steps before it at the rate of the target before. The first call only
  // sets where counting starts (the steps run before the server knew of them are not counted);
  // a step lower than one seen before (a rank restarted from a checkpoint) counts nothing and
  // moves the start back.
  void Advance(int64_t job_step, const StepRate& rate, int64_t from_step);

  double saved_j() const { return saved_j_; }
  // Steps counted while a plan ran, and all steps counted.
  int64_t plan_steps() const { return plan_steps_; }
  int64_t counted_steps() const { return counted_steps_; }
  // The energy the counted steps used, over the ones whose energy the planner could say.
  double estimated_j() const { return estimated_j_; }
  int64_t estimated_steps() const { return estimated_steps_; }
  // Whether any step report arrived.
  bool started() const { return counted_through_.has_value(); }

 private:
  void Count(int64_t steps, const StepRate& rate);

  std::optional<int64_t> counted_through_;  // steps [0, counted_through_) are counted or before the start
  StepRate previous_;                       // the rate of the steps before the latest from_step
  double saved_j_ = 0;
  int64_t plan_steps_ = 0;
  int64_t counted_steps_ = 0;
  double estimated_j_ = 0;
  int64_t estimated_steps_ = 0;
};

}  // namespace wattcut::server
