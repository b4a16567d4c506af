// One training rank's wattcut client, the C++ core of the Python `wattcut.PipelineFrequencyOptimizer`:
// it registers the rank with the planning server, profiles the rank's own iterations with the
// online profiler and uploads the result, then follows the deployments the server hands out and
// sets the planned SM frequency before every instruction through an asynchronous frequency setter
// (the watchdog process for NVML, which resets the clocks even if training dies).
//
// On a node with an agent (`wattcut agent`, docs/agent.md) the rank opens no NVML at all: it uses
// the agent when RankClientOptions::agent_socket is set, else when $WATTCUT_AGENT_SOCKET is set,
// else when the default socket /run/wattcut/agent.sock exists (the last two only in place of the
// nvml or rocm-smi backend, not of one a caller chose). Discovery then goes through the agent, the
// rank leases its GPU at Start (a GPU another process holds is an error naming it) and the setter
// is a thread of this process whose locks are requests to the agent; the agent resets the GPU
// when the lease ends, the process's death included. Without an agent, a root-run rank keeps the
// watchdog setter.
//
// A step, from the training loop:
//   OnStepBegin();                                    // plan mode: takes a deployment due now
//   for each forward/backward: OnInstructionBegin(name); run it; OnInstructionEnd(name);
//   OnStepEnd();
// None of these talks to the server: a background thread (plan_watcher.h) polls the rank's
// deployment and leaves it in a slot; OnStepBegin takes it when its apply_from_step has come
// (a late one with one warning) and installs its frequencies for the whole step. Before the first
// deployment, and whenever the server's answer is "all_max" without an instruction list, every
// instruction runs at the GPU's highest clock.
//
// While profiling (the first steps, when options.profile is set) every instruction of a step runs
// at the profiler's frequency of that step. A step whose clock cannot be applied or whose energy
// cannot be read (an agent that is slow or down: each call waits at most its timeout) is not
// measured and is profiled again at the next step; training goes on. When the profiler has measured every frequency,
// profiling_done_locally() turns true; the caller makes sure every rank of the job got there
// (the Python layer all-reduces the flag) and calls FinishProfiling(), which queues the profile's
// upload. Uploads and straggler reports are sent in the background and retried until the server
// acknowledges them. A server that cannot be reached at Start does not fail it: the rank runs at
// the highest clock and registers (and, for the rank that registers the job, registers the job)
// when the server is back.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/clock.h"
#include "wattcut/base/result.h"
#include "wattcut/gpu/gpu_backend.h"
#include "wattcut/gpu/open_backend.h"
#include "wattcut/runtime/frequency_plan_runner.h"
#include "wattcut/runtime/frequency_setter.h"
#include "wattcut/runtime/online_profiler.h"
#include "wattcut/runtime/plan_server_client.h"
#include "wattcut/runtime/plan_watcher.h"
#include "wattcut/runtime/schedule_cursor.h"

namespace wattcut {

// The rank client's requests to the server. Each empty function is PlanServerClient's HTTP call;
// tests and benchmarks replace them to run without a server.
struct RankServerCalls {
  std::function<Result<std::string>(const TrainingJobInfo& job)> register_job;
  std::function<Status(const std::string& job_id, const TrainingRankIds& ids, const std::vector<int>& freqs_mhz)>
      register_rank;
  std::function<Result<DeploymentAnswer>(const std::string& job_id, int rank, uint64_t step, uint64_t version)>
      fetch_deployment;
  std::function<Status(const std::string& job_id, const TrainingRankIds& ids, const std::vector<ProfiledRow>& rows)>
      upload_rank_profile;
  std::function<Status(const std::string& job_id, const StragglerUpdate& update)> report_straggler;
};

struct RankClientOptions {
  PlanServerAddress server;
  // Empty when this rank registers the job (`register_job`), or when another rank does and its id
  // comes later through SetJobId (`job_id_follows`; the Python layer broadcasts it).
  std::string job_id;
  std::optional<TrainingJobInfo> register_job = {};
  bool job_id_follows = false;
  TrainingRankIds ids;
  int gpu = 0;                        // index of this rank's GPU in the backend
  BackendOptions backend;             // nvml (default), rocm-smi or simulated; dry_run logs setters only
  std::string agent_socket = {};      // the node agent's socket (or http:// URL); see above
  bool watchdog_setter = true;        // with NVML: the watchdog process; else a thread of this process
  std::string freq_setter_path = {};  // the watchdog's executable; empty: see WatchdogOptions::helper_path
  bool profile = true;                // profile online first (else the server has, or gets, a profile)
  OnlineProfilerOptions profiler;     // stage is set from ids.pp_rank
  PlanWatcherOptions watcher;         // rank and server_url are set by Start; the log sink, clock...
  bool start_watcher_thread = true;   // false: nothing polls unless the caller runs watcher().RunOnce()
  RankServerCalls calls;              // empty: HTTP to `server`
};

class RankClient {
 public:
  enum class Phase { kProfiling, kProfiledWaiting, kPlanned, kClosed };

  // Opens the GPU, starts the frequency setter (memory clock locked to its maximum), registers the
  // job (options.register_job) and the rank with the server, asks once for the rank's deployment,
  // starts the background thread and, with options.profile, the online profiler. A server that
  // cannot be reached (or answers 503) is not an error: the registrations happen in the
  // background. Any other refusal (an unknown job, a rank out of range, ...) is.
  static Result<std::unique_ptr<RankClient>> Start(const RankClientOptions& options);
  ~RankClient();

  Status OnStepBegin();
  // The frequency requested for this instruction (MHz).
  Result<int> OnInstructionBegin(std::string_view instruction);
  Status OnInstructionEnd(std::string_view instruction);
  Status OnStepEnd();

  Phase phase() const { return phase_; }
  bool profiling_done_locally() const { return phase_ != Phase::kProfiling; }
  // Queues the upload of the profile (rows of this rank) and switches to the server's plans (at
  // the highest clock until a deployment comes). Only after profiling_done_locally() on every rank.
  Status FinishProfiling();
  const std::vector<ProfiledRow>& profiled_rows() const { return rows_; }

  // Checks the report and queues it for the background; returns at once.
  Status ReportStraggler(const StragglerUpdate& update);
  // The job id when another rank registered the job while the server was down (see
  // RankClientOptions::job_id_follows); false when a different id is known already.
  bool SetJobId(const std::string& job_id) { return watcher_->SetJobId(job_id); }
  // "" until known.
  std::string job_id() const { return watcher_->job_id(); }

  // Blocks until the last requested frequency is locked (for measurements; training never needs it).
  Status WaitUntilFrequencyApplied();
  // The GPU's SM clock now, read from the GPU.
  Result<int> SmClockMhz();
  // The simulated backend only (demos and tests without a GPU): runs one instruction's work on the
  // simulated GPU at the clock it runs now. It lasts time_at_max_clock_s x the GPU model's relative
  // time at that clock and draws the model's reference power for the instruction's kind, scaled by
  // its relative power (gpu/simulated_backend.h), so a profile measures the model's energy, not
  // idle power. Returns the seconds it took; an error for another backend or a bad argument.
  Result<double> RunSimulatedWork(std::string_view instruction, double time_at_max_clock_s);
  // This step's plan (after OnStepBegin in plan mode); empty while every instruction runs at the
  // highest clock without a plan (before the first deployment).
  const std::vector<ScheduleEntry>& schedule() const;
  // The deployment version running (0: none yet) and the background thread's state.
  uint64_t plan_version() const { return watcher_->applied_version(); }
  const PlanWatcher& watcher() const { return *watcher_; }
  PlanWatcher& watcher() { return *watcher_; }
  const std::vector<int>& available_freqs_mhz() const { return freqs_mhz_; }
  uint64_t steps_completed() const { return steps_; }
  // Profiling steps that could not be measured: the clock not applied or the energy counter not
  // read in time (an agent that is slow or down). Each is profiled again at the next step; the
  // training loop never sees the failure (one warning when it starts, one when profiling goes on).
  uint64_t unmeasured_profiling_steps() const { return unmeasured_profiling_steps_; }
  FrequencySetterStats setter_stats() const { return setter_->stats(); }
  // The backend the rank's clocks go through: "nvml", "simulated", "agent(unix:/run/wattcut/agent.sock)".
  std::string backend_name() const { return backend_->name(); }
  bool through_agent() const { return through_agent_; }

  // Stops profiling and the setter, which resets the GPU's clocks. Idempotent; schedule() and
  // setter_stats() stay readable.
  Status Close();

 private:
  RankClient(RankClientOptions options, PlanServerClient server)
      : options_(std::move(options)), server_(std::move(server)) {}
  // The server calls of options.calls, each empty one the HTTP call.
  RankServerCalls Calls() const;
  // At a step boundary: installs the deployment due at this step, if any (no I/O).
  void TakeDeployment();
  // A profiling step that failed to begin or end: counted, warned about once per run of failures.
  void ProfilingStepNotMeasured(uint64_t step, const Error& error);

  RankClientOptions options_;
  PlanServerClient server_;
  std::unique_ptr<GpuBackend> backend_;
  std::unique_ptr<FrequencySetter> setter_;
  SteadyClock clock_;
  std::unique_ptr<OnlineProfiler> profiler_;
  std::vector<ProfiledRow> rows_;
  std::vector<int> freqs_mhz_;                   // supported SM clocks, highest first
  std::unique_ptr<FrequencyPlanRunner> runner_;  // the plans, over setter_
  RankServerCalls calls_;
  std::unique_ptr<PlanWatcher> watcher_;
  bool through_agent_ = false;
  Phase phase_ = Phase::kPlanned;
  bool all_max_ = true;           // no plan installed: every instruction at freqs_mhz_.front()
  uint64_t ready_from_step_ = 0;  // the first step of plan mode
  bool in_step_ = false;
  bool step_prepared_ = false;      // this step's deployment was looked at
  bool profiling_step_ = false;     // this step is a profiler iteration
  bool profiling_failing_ = false;  // the last profiling step was not measured (and said so)
  uint64_t unmeasured_profiling_steps_ = 0;
  uint64_t steps_ = 0;
};

}  // namespace wattcut
