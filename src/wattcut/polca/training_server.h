// A training server of the row simulator: one pipeline of a training job on the server's GPUs,
// its power following the execution timeline of what it runs (a frontier plan, a uniform clock
// lock, AllMax; polca/training_job.h builds them from a profile), iteration after iteration.
//
// The timeline is a step function of the server's power over one iteration, repeated back to
// back: piecewise constant, so the server needs an event only at a step's end, which is what
// the event-driven row simulator wants. Two kinds of change, as on real hardware:
//   * a plan (SetPlan) is deployed at an iteration boundary (the planning server's apply step,
//     some boundaries ahead): the iterations up to it run the old plan, the ones after the new;
//   * a clock limit (SetClockLimit: a lock, a cap, the brake) acts on the GPUs' clocks at once:
//     the iteration in progress continues under the limit's timeline from the same fraction of
//     the iteration done, and the plan's timeline comes back the same way when it is lifted.
// The server counts its iterations (fractional) from time 0, which the simulator compares with
// the unmanaged run's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::polca {

// How the row's policy acts on training servers.
enum class TrainingControl {
  kLocks,        // plain POLCA: a training server is low priority, locked (or capped) like one
  kPowerTarget,  // the job is asked for a peak 1-s power per GPU (policy.t1/t2_training_w)
};
// "locks", "power-target".
std::string TrainingControlName(TrainingControl control);
Result<TrainingControl> ParseTrainingControl(const std::string& name);

// One way the job can run, as the server's power over one iteration.
struct TrainingTimeline {
  std::string name;                 // "AllMax", "1275 MHz", "plan 17"
  double freq_mhz = 0;              // a lock's (or AllMax's) clock; 0 for a plan
  std::vector<double> step_end_s;   // increasing, > 0; the last is the iteration time
  std::vector<double> server_w;     // the server's power during each step
  double peak_power_per_gpu_w = 0;  // the pipeline's peak 1-s GPU power / its GPUs

  double iteration_s() const { return step_end_s.empty() ? 0 : step_end_s.back(); }
  // Average server power over the iteration.
  double average_server_w() const;
};

// Checks a timeline's shape: at least one step, ends increasing from > 0, finite powers >= 0.
Status ValidateTimeline(const TrainingTimeline& timeline);

class TrainingServer {
 public:
  // Runs `plan` from time 0, starting `phase` (in [0, 1)) of the way into an iteration, so that
  // the row's training servers do not all peak at the same moment by construction.
  TrainingServer(const TrainingTimeline* plan, double phase);

  double power_w() const { return running().server_w[step_]; }
  // When the current step ends.
  double next_event_s() const { return iteration_start_s_ + running().step_end_s[step_]; }
  // At next_event_s(): the next step, or the next iteration (which takes up a pending plan).
  void HandleEvent(double t_s);

  // The plan to run from the `boundaries`-th iteration boundary from now on (1: the next); it
  // replaces a plan still pending. The plan running already: nothing pending any more.
  void SetPlan(const TrainingTimeline* plan, int boundaries = 1);
  // A clock limit acting now (nullptr: none): see above.
  void SetClockLimit(const TrainingTimeline* limit, double t_s);

  // Iterations done since time 0 (the fraction of the one in progress included).
  double IterationsDone(double t_s) const;
  const TrainingTimeline& running() const { return limit_ != nullptr ? *limit_ : *running_plan_; }
  // The plan pending, else the one running.
  const TrainingTimeline* plan() const { return pending_ != nullptr ? pending_ : running_plan_; }
  const TrainingTimeline* running_plan() const { return running_plan_; }
  const TrainingTimeline* clock_limit() const { return limit_; }

 private:
  // Puts the server `fraction_done` of the way into an iteration of `timeline` at t_s: its phase
  // at time 0, and the fraction done so far when a clock limit changes what runs.
  void StartAt(const TrainingTimeline& timeline, double fraction_done, double t_s);

  const TrainingTimeline* running_plan_;       // the plan of the iteration in progress
  const TrainingTimeline* pending_ = nullptr;  // the plan from boundaries_left_ boundaries on
  int boundaries_left_ = 0;
  const TrainingTimeline* limit_ = nullptr;
  double iteration_start_s_ = 0;  // when the iteration in progress started (on running()'s time)
  size_t step_ = 0;
  int64_t completed_ = 0;  // iteration ends since time 0
  double start_phase_ = 0;
};

}  // namespace wattcut::polca
