#include "wattcut/runtime/rank_client.h"

namespace wattcut {

Result<std::unique_ptr<RankClient>> RankClient::Start(const RankClientOptions& options) {
  const TrainingRankIds& ids = options.ids;
  if (options.job_id.empty()) return Error{"rank client: empty job id"};
  if (ids.rank < 0 || ids.dp_rank < 0 || ids.pp_rank < 0 || ids.tp_rank < 0) {
    return Error{"rank client: rank, dp_rank, pp_rank and tp_rank must be >= 0"};
  }
  if (!(options.schedule_timeout_s > 0)) return Error{"rank client: schedule timeout must be positive"};
  auto server = PlanServerClient::Create(options.server);
  if (!server) return server.error();

  std::unique_ptr<RankClient> client(new RankClient(options, std::move(*server)));
  auto backend = OpenBackend(options.backend);
  if (!backend) return backend.error();
  client->backend_ = std::move(*backend);
  auto count = client->backend_->DeviceCount();
  if (!count) return count.error();
  if (Status s = CheckGpuIndex(options.gpu, *count); !s.ok()) return s.error();
  auto freqs = SupportedSmClocksMhz(*client->backend_, options.gpu);
  if (!freqs) return freqs.error();
  if (freqs->empty()) return Error{"GPU " + std::to_string(options.gpu) + " reports no supported SM clocks"};
  client->freqs_mhz_ = std::move(*freqs);

  if (options.backend.kind == "nvml" && options.watchdog_setter) {
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

  if (Status s = client->server_.RegisterRank(options.job_id, ids, client->freqs_mhz_); !s.ok()) {
    (void)client->Close();
    return s.error();
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
  return client;
}

RankClient::~RankClient() { (void)Close(); }

Status RankClient::FetchStepSchedule() {
  auto schedule = server_.FetchSchedule(options_.job_id, options_.ids.rank, options_.schedule_timeout_s);
  if (!schedule) return schedule.error();
  runner_->SetNextSchedule(std::move(schedule->entries));
  runner_->BeginStep();
  fetched_this_step_ = true;
  return Status::Ok();
}

Status RankClient::OnStepBegin() {
  if (phase_ == Phase::kClosed) return Error{"rank client: closed"};
  if (in_step_) return Error{"rank client: on_step_begin twice without on_step_end"};
  in_step_ = true;
  fetched_this_step_ = false;
  profiling_step_ = false;
  switch (phase_) {
    case Phase::kProfiling:
      profiling_step_ = true;
      return profiler_->BeginIteration();
    case Phase::kProfiledWaiting:  // its instructions run at the highest clock (OnInstructionBegin)
      return Status::Ok();
    case Phase::kPlanned:
      if (Status s = FetchStepSchedule(); !s.ok()) {
        in_step_ = false;  // the caller may retry the step
        return s;
      }
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
    return Error{"rank client: while profiling, call on_step_begin before the step's first instruction ('" +
                 std::string(instruction) + "')"};
  }
  if (phase_ == Phase::kProfiledWaiting) {
    // Done here, not yet everywhere: run at the highest clock until every rank is done.
    setter_->SetFrequency(freqs_mhz_.front());
    return freqs_mhz_.front();
  }
  // A loop that does not call on_step_begin still gets each step's plan.
  if (!fetched_this_step_ && runner_->cursor().position() == 0) {
    if (Status s = FetchStepSchedule(); !s.ok()) return s.error();
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
  fetched_this_step_ = false;
  ++steps_;
  if (profiling_step_) {
    profiling_step_ = false;
    if (!was_in_step) return Error{"rank client: on_step_end without on_step_begin while profiling"};
    if (Status s = profiler_->EndIteration(); !s.ok()) return s;
    if (profiler_->done()) {
      profiler_->Finish();
      rows_ = profiler_->rows();
      profiler_.reset();
      phase_ = Phase::kProfiledWaiting;
    }
    return Status::Ok();
  }
  if (phase_ == Phase::kProfiledWaiting) return Status::Ok();
  return runner_->OnStepEnd();
}

Status RankClient::FinishProfiling() {
  if (phase_ != Phase::kProfiledWaiting) {
    return Error{phase_ == Phase::kProfiling ? "rank client: the profiler has frequencies left to measure"
                                             : "rank client: not profiling"};
  }
  if (in_step_) return Error{"rank client: finish profiling between steps, not inside one"};
  if (Status s = server_.UploadRankProfile(options_.job_id, options_.ids, rows_); !s.ok()) return s;
  phase_ = Phase::kPlanned;
  return Status::Ok();
}

Status RankClient::ReportStraggler(const StragglerUpdate& update) const {
  return server_.ReportStraggler(options_.job_id, update);
}

Status RankClient::WaitUntilFrequencyApplied() {
  if (phase_ == Phase::kClosed) return Error{"rank client: closed"};
  return setter_->WaitUntilApplied();
}

Result<int> RankClient::SmClockMhz() {
  if (phase_ == Phase::kClosed) return Error{"rank client: closed"};
  return backend_->SmClockMhz(options_.gpu);
}

Status RankClient::Close() {
  if (phase_ == Phase::kClosed) return Status::Ok();
  phase_ = Phase::kClosed;
  if (profiler_) profiler_->Finish();
  profiler_.reset();
  return setter_ ? setter_->Stop() : Status::Ok();
}

}  // namespace wattcut
