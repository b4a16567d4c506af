// One training rank's wattcut client, the C++ core of the Python `wattcut.PipelineFrequencyOptimizer`:
// it registers the rank with the planning server, profiles the rank's own iterations with the
// online profiler and uploads the result, then each step fetches the rank's frequency plan from
// the server and sets the planned SM frequency before every instruction through an asynchronous
// frequency setter (the watchdog process for NVML, which resets the clocks even if training dies).
//
// A step, from the training loop:
//   OnStepBegin();                                    // plan mode: fetches this step's schedule
//   for each forward/backward: OnInstructionBegin(name); run it; OnInstructionEnd(name);
//   OnStepEnd();
// While profiling (the first steps, when options.profile is set) every instruction of a step runs
// at the profiler's frequency of that step. When the profiler has measured every frequency,
// profiling_done_locally() turns true; the caller makes sure every rank of the job got there
// (the Python layer all-reduces the flag) and calls FinishProfiling(), which uploads the profile.
// From the next step on, the rank follows the server's plans. The server answers each step's
// schedule request when every rank of the job has asked (one barrier per step, at the step
// boundary), so a straggler reported during step s changes the plans of step s + 1.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/gpu/clock.h"
#include "wattcut/gpu/gpu_backend.h"
#include "wattcut/gpu/open_backend.h"
#include "wattcut/runtime/frequency_plan_runner.h"
#include "wattcut/runtime/frequency_setter.h"
#include "wattcut/runtime/online_profiler.h"
#include "wattcut/runtime/plan_server_client.h"
#include "wattcut/runtime/schedule_cursor.h"

namespace wattcut {

struct RankClientOptions {
  PlanServerAddress server;
  std::string job_id;
  TrainingRankIds ids;
  int gpu = 0;                        // index of this rank's GPU in the backend
  BackendOptions backend;             // nvml (default) or simulated; dry_run logs setters only
  bool watchdog_setter = true;        // with NVML: the watchdog process; else a thread of this process
  std::string freq_setter_path = {};  // the watchdog's executable; empty: see WatchdogOptions::helper_path
  bool profile = true;                // profile online first (else the server has, or gets, a profile)
  OnlineProfilerOptions profiler;     // stage is set from ids.pp_rank
  double schedule_timeout_s = 600;    // longest wait for the other ranks at a step boundary
};

class RankClient {
 public:
  enum class Phase { kProfiling, kProfiledWaiting, kPlanned, kClosed };

  // Opens the GPU, starts the frequency setter (memory clock locked to its maximum), registers the
  // rank with the server and, with options.profile, starts the online profiler.
  static Result<std::unique_ptr<RankClient>> Start(const RankClientOptions& options);
  ~RankClient();

  Status OnStepBegin();
  // The frequency requested for this instruction (MHz).
  Result<int> OnInstructionBegin(std::string_view instruction);
  Status OnInstructionEnd(std::string_view instruction);
  Status OnStepEnd();

  Phase phase() const { return phase_; }
  bool profiling_done_locally() const { return phase_ != Phase::kProfiling; }
  // Uploads the profile (rows of this rank) and switches to the server's plans. Only after
  // profiling_done_locally() on every rank.
  Status FinishProfiling();
  const std::vector<ProfiledRow>& profiled_rows() const { return rows_; }

  Status ReportStraggler(const StragglerUpdate& update) const;

  // Blocks until the last requested frequency is locked (for measurements; training never needs it).
  Status WaitUntilFrequencyApplied();
  // The GPU's SM clock now, read from the GPU.
  Result<int> SmClockMhz();
  // This step's plan (after OnStepBegin in plan mode); empty before the first plan.
  const std::vector<ScheduleEntry>& schedule() const { return runner_->cursor().schedule(); }
  const std::vector<int>& available_freqs_mhz() const { return freqs_mhz_; }
  uint64_t steps_completed() const { return steps_; }
  FrequencySetterStats setter_stats() const { return setter_->stats(); }

  // Stops profiling and the setter, which resets the GPU's clocks. Idempotent; schedule() and
  // setter_stats() stay readable.
  Status Close();

 private:
  RankClient(RankClientOptions options, PlanServerClient server)
      : options_(std::move(options)), server_(std::move(server)) {}
  Status FetchStepSchedule();

  RankClientOptions options_;
  PlanServerClient server_;
  std::unique_ptr<GpuBackend> backend_;
  std::unique_ptr<FrequencySetter> setter_;
  SteadyClock clock_;
  std::unique_ptr<OnlineProfiler> profiler_;
  std::vector<ProfiledRow> rows_;
  std::vector<int> freqs_mhz_;                   // supported SM clocks, highest first
  std::unique_ptr<FrequencyPlanRunner> runner_;  // the plans, over setter_
  Phase phase_ = Phase::kPlanned;
  bool in_step_ = false;
  bool fetched_this_step_ = false;
  bool profiling_step_ = false;  // this step is a profiler iteration
  uint64_t steps_ = 0;
};

}  // namespace wattcut
