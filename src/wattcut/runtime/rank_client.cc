#include "wattcut/runtime/rank_client.h"

#include "wattcut/base/general_text.h"
#include "wattcut/gpu/agent_backend.h"
#include "wattcut/gpu/simulated_backend.h"

namespace wattcut {

namespace {

// The longest simulated instruction: an hour at the highest clock is no instruction of a training step.
constexpr double kMaxSimulatedWorkS = 3600;

// The agent the rank's clocks go through (see rank_client.h), or "" for its own backend.
std::string RankAgent(const RankClientOptions& options) {
  if (!options.agent_socket.empty()) return options.agent_socket;
  if (options.backend.kind == "agent") return AgentAddress(options.backend);
  // A backend the caller chose (simulated: tests, demos) goes through no agent; a real GPU's does
  // where there is one.
  if (options.backend.kind != "nvml" && options.backend.kind != "rocm-smi") return "";
  return AgentFromEnvironment();
}

std::string StragglerText(const StragglerUpdate& update) {
  std::string what = "straggler report (dp_rank " + std::to_string(update.dp_rank) + ": ";
  if (update.slowdown) return what + "slowdown " + GeneralText(*update.slowdown) + ")";
  if (update.iteration_time_s) return what + "iteration time " + GeneralText(*update.iteration_time_s) + " s)";
  return what + "recovered)";
}

}  // namespace

RankServerCalls RankClient::Calls() const {
  RankServerCalls calls = options_.calls;
  const PlanServerClient server = server_;
  if (!calls.register_job)
    calls.register_job = [server](const TrainingJobInfo& job) { return server.RegisterJob(job); };
  if (!calls.register_rank) {
    calls.register_rank = [server](const std::string& job_id, const TrainingRankIds& ids,
                                   const std::vector<int>& freqs) { return server.RegisterRank(job_id, ids, freqs); };
  }
  if (!calls.fetch_deployment) {
    calls.fetch_deployment = [server](const std::string& job_id, int rank, uint64_t step, uint64_t version) {
      return server.FetchDeployment(job_id, rank, step, version);
    };
  }
  if (!calls.upload_rank_profile) {
    calls.upload_rank_profile = [server](const std::string& job_id, const TrainingRankIds& ids,
                                         const std::vector<ProfiledRow>& rows) {
      return server.UploadRankProfile(job_id, ids, rows);
    };
  }
  if (!calls.report_straggler) {
    calls.report_straggler = [server](const std::string& job_id, const StragglerUpdate& update) {
      return server.ReportStraggler(job_id, update);
    };
  }
  return calls;
}

Result<std::unique_ptr<RankClient>> RankClient::Start(const RankClientOptions& options) {
  const TrainingRankIds& ids = options.ids;
  if (options.job_id.empty() && !options.register_job && !options.job_id_follows) {
    return Error{"rank client: empty job id"};
  }
  if (!options.job_id.empty() && options.register_job) {
    return Error{"rank client: give a job id or a job to register, not both"};
  }
  if (ids.rank < 0 || ids.dp_rank < 0 || ids.pp_rank < 0 || ids.tp_rank < 0) {
    return Error{"rank client: rank, dp_rank, pp_rank and tp_rank must be >= 0"};
  }
  auto server = PlanServerClient::Create(options.server);
  if (!server) return server.error();

  std::unique_ptr<RankClient> client(new RankClient(options, std::move(*server)));
  BackendOptions backend_options = options.backend;
  if (const std::string agent = RankAgent(options); !agent.empty()) {
    backend_options.kind = "agent";
    backend_options.agent = agent;
    client->through_agent_ = true;
  }
  auto backend = OpenBackend(backend_options);
  if (!backend) return client->through_agent_ ? backend.error().WithContext("rank client: ") : backend.error();
  client->backend_ = std::move(*backend);
  auto count = client->backend_->DeviceCount();
  if (!count) return count.error();
  if (Status s = CheckGpuIndex(options.gpu, *count); !s.ok()) return s.error();
  auto freqs = SupportedSmClocksMhz(*client->backend_, options.gpu);
  if (!freqs) return freqs.error();
  if (freqs->empty()) return Error{"GPU " + std::to_string(options.gpu) + " reports no supported SM clocks"};
  client->freqs_mhz_ = std::move(*freqs);
  if (auto* agent = dynamic_cast<AgentBackend*>(client->backend_.get())) {
    // The GPU is this process's from now on: another holder is found here, not by the setter later.
    if (Status s = agent->LeaseGpus({options.gpu}); !s.ok()) return s.error().WithContext("rank client: ");
  }

  if (backend_options.kind == "nvml" && options.watchdog_setter) {
    WatchdogOptions watchdog;
    watchdog.gpu = options.gpu;
    watchdog.nvml_library = options.backend.nvml_library;
    watchdog.dry_run = options.backend.dry_run;
    watchdog.helper_path = options.freq_setter_path;
    auto setter = StartWatchdogFrequencySetter(watchdog);
    if (!setter) return setter.error();
    client->setter_ = std::move(*setter);
  } else {
    auto setter = StartThreadFrequencySetter(*client->backend_, options.gpu);
    if (!setter) return setter.error();
    client->setter_ = std::move(*setter);
  }

  client->runner_ = std::make_unique<FrequencyPlanRunner>(*client->setter_, std::vector<ScheduleEntry>{});

  // The watcher's requests, over copies (no pointer back into the client).
  client->calls_ = client->Calls();
  const RankServerCalls& calls = client->calls_;
  PlanWatcherServer watcher_server;
  if (options.register_job) {
    watcher_server.register_job = [register_job = calls.register_job, job = *options.register_job] {
      return register_job(job);
    };
  }
  watcher_server.register_rank = [register_rank = calls.register_rank, ids, freqs = client->freqs_mhz_](
                                     const std::string& job_id) { return register_rank(job_id, ids, freqs); };
  watcher_server.fetch_deployment = [fetch = calls.fetch_deployment, rank = ids.rank](const std::string& job_id,
                                                                                      uint64_t step, uint64_t version) {
    return fetch(job_id, rank, step, version);
  };
  PlanWatcherOptions watcher_options = options.watcher;
  watcher_options.rank = ids.rank;
  watcher_options.server_url = client->server_.url();
  client->watcher_ = std::make_unique<PlanWatcher>(std::move(watcher_options), std::move(watcher_server),
                                                   options.job_id, /*rank_registered=*/false);
  PlanWatcher& watcher = *client->watcher_;

  // Registration now, unless the server is down (then in the background) or the job id is to come.
  double first_delay_s = options.watcher.max_backoff_s;  // without a job id: until SetJobId wakes it
  if (!options.job_id.empty() || options.register_job) {
    if (Status s = watcher.RegisterNow(); s.ok()) {
      first_delay_s = watcher.RunOnce();  // the rank's deployment before its first step
    } else if (FailureKindOf(s.error()) == FailureKind::kUnreachable) {
      first_delay_s = watcher.retry_delay_s();
    } else {
      (void)client->Close();
      return s.error();
    }
  }
  if (options.profile) {
    OnlineProfilerOptions profiler_options = options.profiler;
    profiler_options.stage = ids.pp_rank;
    auto profiler =
        OnlineProfiler::Start(*client->backend_, options.gpu, *client->setter_, client->clock_, profiler_options);
    if (!profiler) {
      (void)client->Close();
      return profiler.error();
    }
    client->profiler_ = std::move(*profiler);
    client->phase_ = Phase::kProfiling;
  }
  if (options.start_watcher_thread) watcher.Start(first_delay_s);
  return client;
}

RankClient::~RankClient() { (void)Close(); }

const std::vector<ScheduleEntry>& RankClient::schedule() const {
  static const std::vector<ScheduleEntry> kNone;
  return all_max_ ? kNone : runner_->cursor().schedule();
}

void RankClient::TakeDeployment() {
  step_prepared_ = true;
  if (!watcher_->has_pending()) return;  // the common case: one atomic load
  std::optional<RankDeployment> deployment = watcher_->TakeDue(steps_, ready_from_step_);
  if (!deployment) return;
  if (deployment->frequencies.empty()) {  // all_max without the instruction list
    all_max_ = true;
    return;
  }
  all_max_ = false;
  runner_->SetNextSchedule(std::move(deployment->frequencies));
  runner_->BeginStep();
}

Status RankClient::OnStepBegin() {
  if (phase_ == Phase::kClosed) return Error{"rank client: closed"};
  if (in_step_) return Error{"rank client: on_step_begin twice without on_step_end"};
  in_step_ = true;
  step_prepared_ = false;
  profiling_step_ = false;
  switch (phase_) {
    case Phase::kProfiling:
      if (Status s = profiler_->BeginIteration(); !s.ok()) {
        ProfilingStepNotMeasured(steps_, s.error());  // the step runs unmeasured, at the clock requested
        return Status::Ok();
      }
      profiling_step_ = true;
      return Status::Ok();
    case Phase::kProfiledWaiting:  // its instructions run at the highest clock (OnInstructionBegin)
      return Status::Ok();
    case Phase::kPlanned:
      TakeDeployment();
      return Status::Ok();
    case Phase::kClosed:
      break;
  }
  return Status::Ok();
}

Result<int> RankClient::OnInstructionBegin(std::string_view instruction) {
  if (phase_ == Phase::kClosed) return Error{"rank client: closed"};
  if (profiling_step_) {
    if (Status s = profiler_->InstructionBegin(instruction); !s.ok()) return s.error();
    return profiler_->current_freq_mhz();
  }
  if (phase_ == Phase::kProfiling) {
    if (in_step_) return profiler_->current_freq_mhz();  // a step that could not be profiled
    return Error{"rank client: while profiling, call on_step_begin before the step's first instruction ('" +
                 std::string(instruction) + "')"};
  }
  if (phase_ == Phase::kPlanned && !step_prepared_) TakeDeployment();  // a loop without on_step_begin
  if (phase_ == Phase::kProfiledWaiting || all_max_) {
    // Done profiling here but not everywhere, or no plan yet: the highest clock.
    setter_->SetFrequency(freqs_mhz_.front());
    return freqs_mhz_.front();
  }
  return runner_->OnInstructionBegin(instruction);
}

Status RankClient::OnInstructionEnd(std::string_view instruction) {
  if (phase_ == Phase::kClosed) return Error{"rank client: closed"};
  if (profiling_step_) return profiler_->InstructionEnd(instruction);
  return Status::Ok();
}

Status RankClient::OnStepEnd() {
  if (phase_ == Phase::kClosed) return Error{"rank client: closed"};
  const bool was_in_step = in_step_;
  in_step_ = false;
  step_prepared_ = false;
  ++steps_;
  watcher_->SetStepsCompleted(steps_);
  if (profiling_step_) {
    profiling_step_ = false;
    if (!was_in_step) return Error{"rank client: on_step_end without on_step_begin while profiling"};
    if (Status s = profiler_->EndIteration(); !s.ok()) {
      ProfilingStepNotMeasured(steps_ - 1, s.error());
      return Status::Ok();
    }
    if (profiling_failing_) {
      watcher_->Log("profiling goes on at step " + std::to_string(steps_ - 1) + " (" +
                    std::to_string(unmeasured_profiling_steps_) + " step(s) not measured so far)");
      profiling_failing_ = false;
    }
    if (profiler_->done()) {
      profiler_->Finish();
      rows_ = profiler_->rows();
      profiler_.reset();
      phase_ = Phase::kProfiledWaiting;
    }
    return Status::Ok();
  }
  if (phase_ == Phase::kProfiling || phase_ == Phase::kProfiledWaiting || all_max_) return Status::Ok();
  return runner_->OnStepEnd();
}

void RankClient::ProfilingStepNotMeasured(uint64_t step, const Error& error) {
  ++unmeasured_profiling_steps_;
  if (profiling_failing_) return;
  profiling_failing_ = true;
  watcher_->Log("step " + std::to_string(step) + " could not be profiled (" + error.message +
                "); training goes on, and the profiler measures it again at the next step");
}

Status RankClient::FinishProfiling() {
  if (phase_ != Phase::kProfiledWaiting) {
    return Error{phase_ == Phase::kProfiling ? "rank client: the profiler has frequencies left to measure"
                                             : "rank client: not profiling"};
  }
  if (in_step_) return Error{"rank client: finish profiling between steps, not inside one"};
  if (auto body = RankProfileJson(options_.ids, rows_); !body) return body.error();
  watcher_->Enqueue({"rank profile upload", [upload = calls_.upload_rank_profile, ids = options_.ids, rows = rows_](
                                                const std::string& job_id) { return upload(job_id, ids, rows); }});
  phase_ = Phase::kPlanned;
  ready_from_step_ = steps_;
  return Status::Ok();
}

Status RankClient::ReportStraggler(const StragglerUpdate& update) {
  if (phase_ == Phase::kClosed) return Error{"rank client: closed"};
  if (Status s = CheckStragglerUpdate(update); !s.ok()) return s;
  watcher_->Enqueue({StragglerText(update), [report = calls_.report_straggler, update](const std::string& job_id) {
                       return report(job_id, update);
                     }});
  return Status::Ok();
}

Status RankClient::WaitUntilFrequencyApplied() {
  if (phase_ == Phase::kClosed) return Error{"rank client: closed"};
  return setter_->WaitUntilApplied();
}

Result<int> RankClient::SmClockMhz() {
  if (phase_ == Phase::kClosed) return Error{"rank client: closed"};
  return backend_->SmClockMhz(options_.gpu);
}

Result<double> RankClient::RunSimulatedWork(std::string_view instruction, double time_at_max_clock_s) {
  if (phase_ == Phase::kClosed) return Error{"rank client: closed"};
  auto* simulated = dynamic_cast<SimulatedBackend*>(backend_.get());
  if (simulated == nullptr) {
    return Error{"rank client: simulated work needs the simulated GPU backend; this rank's is " + backend_->name()};
  }
  const std::optional<InstructionKind> kind = ParseInstruction(instruction);
  if (!kind) return Error{"rank client: simulated work of an unknown instruction '" + std::string(instruction) + "'"};
  if (!(time_at_max_clock_s >= 0 && time_at_max_clock_s <= kMaxSimulatedWorkS)) {
    return Error{"rank client: simulated work must last 0 to " + GeneralText(kMaxSimulatedWorkS) +
                 " s at the highest clock, not " + GeneralText(time_at_max_clock_s)};
  }
  const GpuModel& model = simulated->model(options_.gpu);
  // Split backward kinds draw what a whole backward does.
  const InstructionKind reference = *kind == InstructionKind::kForward ? *kind : InstructionKind::kBackward;
  return simulated->Run(options_.gpu, *kind,
                        WorkloadPoint{time_at_max_clock_s, model.middle_stage.of(reference).power_w});
}

Status RankClient::Close() {
  if (phase_ == Phase::kClosed) return Status::Ok();
  phase_ = Phase::kClosed;
  if (watcher_) watcher_->Stop();
  if (profiler_) profiler_->Finish();
  profiler_.reset();
  return setter_ ? setter_->Stop() : Status::Ok();
}

}  // namespace wattcut
