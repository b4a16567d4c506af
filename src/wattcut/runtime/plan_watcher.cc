#include "wattcut/runtime/plan_watcher.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "wattcut/base/general_text.h"
#include "wattcut/base/steady_time.h"

namespace wattcut {
namespace {

std::string Seconds(double s) { return GeneralText(std::round(s * 10) / 10) + " s"; }

std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

FailureKind FailureKindOf(const Error& error) {
  switch (error.code) {
    case ErrorCode::kUnavailable:
    case ErrorCode::kDeadlineExceeded:
    case ErrorCode::kIOError:
      return FailureKind::kUnreachable;
    case ErrorCode::kNotFound:
      return FailureKind::kJobMissing;
    case ErrorCode::kConflict:
      return FailureKind::kConflict;
    default:
      return FailureKind::kRefused;
  }
}

PlanWatcher::PlanWatcher(PlanWatcherOptions options, PlanWatcherServer server, std::string job_id, bool rank_registered)
    : options_(std::move(options)),
      server_(std::move(server)),
      poll_interval_s_(options_.first_poll_interval_s),
      job_id_(std::move(job_id)) {
  rank_registered_.store(rank_registered, std::memory_order_relaxed);
  connected_.store(rank_registered, std::memory_order_relaxed);
  if (!options_.now_s) options_.now_s = SteadyNowS;
  if (!options_.random_unit) {
    auto generator = std::make_shared<std::mt19937_64>(static_cast<uint64_t>(options_.rank) * 0x9E3779B97F4A7C15ULL ^
                                                       static_cast<uint64_t>(SteadyNowS() * 1e9));
    auto mutex = std::make_shared<std::mutex>();
    options_.random_unit = [generator, mutex] {
      std::lock_guard lock(*mutex);
      return std::uniform_real_distribution<double>(0.0, 1.0)(*generator);
    };
  }
  if (!options_.log) {
    options_.log = [](const std::string& line) { std::fprintf(stderr, "wattcut: %s\n", line.c_str()); };
  }
}

PlanWatcher::~PlanWatcher() { Stop(); }

double PlanWatcher::NowS() const { return options_.now_s(); }

void PlanWatcher::Log(const std::string& line) const {
  options_.log("rank " + std::to_string(options_.rank) + ": " + line);
}

double PlanWatcher::Jittered(double seconds) {
  const double u = std::clamp(options_.random_unit(), 0.0, 1.0);
  return seconds * (1 + options_.jitter_fraction * (2 * u - 1));
}

std::string PlanWatcher::job_id() const {
  std::lock_guard lock(state_mutex_);
  return job_id_;
}

bool PlanWatcher::SetJobId(const std::string& job_id) {
  {
    std::lock_guard lock(state_mutex_);
    if (!job_id_.empty()) return job_id_ == job_id;
    job_id_ = job_id;
    wake_ = true;
  }
  wake_cv_.notify_one();
  return true;
}

size_t PlanWatcher::queued_requests() const {
  std::lock_guard lock(state_mutex_);
  return queue_.size();
}

void PlanWatcher::Enqueue(BackgroundRequest request) {
  {
    std::lock_guard lock(state_mutex_);
    queue_.push_back({std::move(request)});
    if (in_outage_.load(std::memory_order_relaxed)) return;  // the backoff's next round sends it
    wake_ = true;
  }
  wake_cv_.notify_one();
}

void PlanWatcher::Reached() {
  connected_.store(true, std::memory_order_relaxed);
  if (!outage_since_s_) return;
  Log("the wattcut server at " + options_.server_url + " is back after " + Seconds(NowS() - *outage_since_s_) + " (" +
      Plural(outage_missed_, "missed update", "missed updates") + ")");
  outage_since_s_.reset();
  outage_missed_ = 0;
  in_outage_.store(false, std::memory_order_relaxed);
}

double PlanWatcher::Failed(const std::string& what, const Error& error) {
  const FailureKind kind = FailureKindOf(error);
  if (kind == FailureKind::kUnreachable) {
    connected_.store(false, std::memory_order_relaxed);
    if (!outage_since_s_) {
      outage_since_s_ = NowS();
      in_outage_.store(true, std::memory_order_relaxed);  // before the counters others watch
      outages_.fetch_add(1, std::memory_order_relaxed);
      const uint64_t version = applied_version_.load(std::memory_order_relaxed);
      Log(what + ": " + error.message + "; training goes on with " +
          (version == 0 ? std::string("every instruction at the highest clock")
                        : "plan version " + std::to_string(version)) +
          "; retrying every " + Seconds(options_.min_backoff_s) + " to " + Seconds(options_.max_backoff_s));
    }
    ++outage_missed_;
  } else {
    Reached();
    if (kind == FailureKind::kJobMissing) {
      if (!job_missing_warned_) {
        const uint64_t version = applied_version_.load(std::memory_order_relaxed);
        Log(what + ": " + error.message + "; keeping " +
            (version == 0 ? std::string("the highest clock") : "plan version " + std::to_string(version)) +
            " and asking again");
        job_missing_warned_ = true;
      }
    } else if (kind == FailureKind::kConflict && what == "deployment poll") {
      rank_registered_.store(false, std::memory_order_relaxed);  // re-register next round
    } else if (refused_warned_ != error.message) {
      Log(what + ": " + error.message);
      refused_warned_ = error.message;
    }
  }
  missed_updates_.fetch_add(1, std::memory_order_relaxed);
  backoff_s_ = backoff_s_ == 0 ? options_.min_backoff_s : std::min(2 * backoff_s_, options_.max_backoff_s);
  return Jittered(backoff_s_);
}

Status PlanWatcher::RegisterNow() {
  if (EnsureRegistered(/*at_start=*/true)) return Status::Ok();
  return last_error_;
}

bool PlanWatcher::RegistrationFailed(const std::string& what, const Error& error, bool at_start) {
  last_error_ = error;
  // At start-up only an outage is the watcher's to handle; the caller reports anything else.
  if (at_start && FailureKindOf(error) != FailureKind::kUnreachable) return false;
  next_delay_s_ = Failed(what, error);
  return false;
}

bool PlanWatcher::EnsureRegistered(bool at_start) {
  std::string job_id = this->job_id();
  if (job_id.empty() && server_.register_job) {
    auto id = server_.register_job();
    if (!id) return RegistrationFailed("job registration", id.error(), at_start);
    Reached();
    SetJobId(*id);
    job_id = *id;
  }
  if (job_id.empty()) {
    last_error_ = Error::Conflict("the job id is not known yet");
    next_delay_s_ = options_.max_backoff_s;  // SetJobId wakes the watcher
    return false;
  }
  if (rank_registered_.load(std::memory_order_relaxed)) return true;
  Status s = server_.register_rank(job_id);
  // In the background a 409 means an earlier try got through (its answer was lost) or a restarted
  // server kept the registration: the rank is registered.
  if (!s.ok() && (at_start || s.error().code != ErrorCode::kConflict)) {
    return RegistrationFailed("rank registration", s.error(), at_start);
  }
  Reached();
  rank_registered_.store(true, std::memory_order_relaxed);
  return true;
}

bool PlanWatcher::DeliverQueued() {
  const std::string job_id = this->job_id();
  while (true) {
    BackgroundRequest request;
    {
      std::lock_guard lock(state_mutex_);
      if (queue_.empty()) return true;
      request = queue_.front().request;
    }
    Status s = request.send(job_id);
    std::unique_lock lock(state_mutex_);
    QueuedRequest& front = queue_.front();
    if (s.ok()) {
      queue_.pop_front();
      continue;
    }
    const FailureKind kind = FailureKindOf(s.error());
    if (kind == FailureKind::kRefused) {
      queue_.pop_front();
      lock.unlock();
      Reached();
      Log(request.what + " refused, dropped: " + s.error().message);
      continue;
    }
    if (kind == FailureKind::kUnreachable) {
      lock.unlock();
      last_error_ = s.error();
      next_delay_s_ = Failed(request.what, s.error());
      return false;
    }
    // 404 / 409: the job or rank is being (re-)registered; the poll below finds out more.
    const bool warn = !front.warned;
    front.warned = true;
    lock.unlock();
    Reached();
    if (warn) Log(request.what + ": " + s.error().message + "; retrying until the server acknowledges it");
    return true;
  }
}

double PlanWatcher::RunOnce() {
  if (!EnsureRegistered(/*at_start=*/false)) return next_delay_s_;
  // The poll first: it tells the server this rank's step before a queued straggler report
  // makes it choose an apply step (right after a server restart it knows no other).
  const std::string job_id = this->job_id();
  auto answer = server_.fetch_deployment(job_id, steps_completed_.load(std::memory_order_relaxed), held_version_);
  if (!answer) return Failed("deployment poll", answer.error());
  Reached();
  backoff_s_ = 0;
  job_missing_warned_ = false;
  refused_warned_.clear();
  poll_interval_s_ = answer->poll_interval_s;
  if (answer->change) Hold(std::move(*answer->change));
  if (!DeliverQueued()) return next_delay_s_;
  return Jittered(poll_interval_s_);
}

void PlanWatcher::Hold(RankDeployment deployment) {
  const uint64_t version = deployment.version;
  {
    std::lock_guard lock(pending_mutex_);
    // A version that does not increase means the server started over: what it says now wins.
    if (!pending_.empty() && pending_.back().version >= version) pending_.clear();
    pending_.push_back(std::move(deployment));
    has_pending_.store(true, std::memory_order_release);
  }
  held_version_ = version;
  received_version_.store(version, std::memory_order_relaxed);
}

std::optional<RankDeployment> PlanWatcher::TakeDue(uint64_t step, uint64_t ready_from_step) {
  if (!has_pending_.load(std::memory_order_acquire)) return std::nullopt;
  std::optional<RankDeployment> due;
  {
    std::lock_guard lock(pending_mutex_);
    auto newest_due = std::find_if(pending_.rbegin(), pending_.rend(),
                                   [step](const RankDeployment& d) { return d.apply_from_step <= step; });
    if (newest_due == pending_.rend()) return std::nullopt;
    due = std::move(*newest_due);
    pending_.erase(pending_.begin(), newest_due.base());
    has_pending_.store(!pending_.empty(), std::memory_order_release);
  }
  applied_version_.store(due->version, std::memory_order_relaxed);
  if (step > std::max(due->apply_from_step, ready_from_step)) {
    const uint64_t late = step - due->apply_from_step;
    Log("plan version " + std::to_string(due->version) + " was due at step " + std::to_string(due->apply_from_step) +
        "; applied at step " + std::to_string(step) + " (" + Plural(late, "step", "steps") + " late)");
  }
  return due;
}

void PlanWatcher::Start(double first_delay_s) {
  if (thread_.joinable()) return;
  thread_ = std::thread([this, delay_s = first_delay_s]() mutable {
    while (true) {
      {
        std::unique_lock lock(state_mutex_);
        wake_cv_.wait_for(lock, std::chrono::duration<double>(std::max(0.0, delay_s)),
                          [this] { return stop_ || wake_; });
        if (stop_) return;
        wake_ = false;
      }
      delay_s = RunOnce();
    }
  });
}

void PlanWatcher::Stop() {
  {
    std::lock_guard lock(state_mutex_);
    if (stop_) return;
    stop_ = true;
  }
  wake_cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  std::string dropped;
  {
    std::lock_guard lock(state_mutex_);
    for (const QueuedRequest& q : queue_) dropped += (dropped.empty() ? "" : ", ") + q.request.what;
    queue_.clear();
  }
  if (!dropped.empty()) Log("stopped before the server acknowledged: " + dropped);
}

}  // namespace wattcut
