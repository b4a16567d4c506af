#include "wattcut/polca/server_model.h"

#include <algorithm>
#include <functional>

namespace wattcut::polca {

InferenceServerSettings::InferenceServerSettings(const InferencePowerModel& power_model, const PolcaConfig& config)
    : model(power_model),
      cap_response_s(config.control.power_cap_response_s),
      idle_w(power_model.ServerIdleW()),
      max_batch(config.service.max_batch),
      max_prefill_tokens(config.service.max_prefill_tokens),
      decode(power_model, config.service.max_batch) {}

InferenceServer::InferenceServer(const InferenceServerSettings& settings, Priority priority, EngineCounters counters)
    : power_w_(settings.idle_w),
      decode_(settings.decode, GpuLimits{settings.model.max_freq_mhz(), 0}),
      priority_(priority),
      counting_(counters == EngineCounters::kKept),
      settings_(&settings) {
  static_assert(sizeof(InferenceServer) == 128, "two cache lines: see the layout in server_model.h");
  if (counting_) counters_ = std::make_unique<ServerCounters>();
  // One allocation, made while the row is built, puts the row's batches side by side.
  batch_.reset(static_cast<Batched*>(
      ::operator new(static_cast<size_t>(settings.max_batch) * sizeof(Batched), kBatchAlignment)));
}

void InferenceServer::BecomeBusy(double t_s) { busy_since_s_ = t_s; }

void InferenceServer::BecomeIdle(double t_s, ServedLog& log) {
  log.busy_server_s += t_s - busy_since_s_;
  phase_ = Phase::kIdle;
  power_w_ = settings_->idle_w;
  next_event_s_ = std::numeric_limits<double>::infinity();
}

void InferenceServer::Finish(double t_s, ServedLog& log) {
  if (phase_ == Phase::kIdle) return;
  log.busy_server_s += t_s - busy_since_s_;
  busy_since_s_ = t_s;
}

void InferenceServer::Arrive(const Arrival& arrival, double t_s) {
  ++outstanding_;
  // A server idle, or decoding with room in its batch, has no request waiting: it would have
  // started a prefill of it. The arrival is then the prefill's one request.
  if (phase_ == Phase::kIdle) {
    BecomeBusy(t_s);
  } else if (phase_ == Phase::kDecode && static_cast<int>(decoding_count_) < settings_->max_batch) {
    AdvanceDecode(t_s);
  } else {
    if (waiting_ == nullptr) waiting_ = std::make_unique<WaitingQueue>();
    waiting_->requests.push_back({arrival.time_s, arrival.context_tokens, arrival.generated_tokens});
    return;
  }
  batch_[decoding_count_] = {0, arrival.time_s, arrival.generated_tokens};
  prefill_count_ = 1;
  prefill_tokens_ = arrival.context_tokens;
  BeginPrefill(t_s);
}

void InferenceServer::StartPrefill(double t_s) {
  const InferenceServerSettings& settings = *settings_;
  int room = settings.max_batch - static_cast<int>(decoding_count_);
  WaitingQueue& queue = *waiting_;  // requests wait
  prefill_count_ = 0;
  prefill_tokens_ = 0;
  while (queue.head < queue.requests.size() && room > 0) {
    const Waiting& w = queue.requests[queue.head];
    if (prefill_count_ > 0 && prefill_tokens_ + w.context_tokens > settings.max_prefill_tokens) break;
    prefill_tokens_ += w.context_tokens;
    batch_[decoding_count_ + prefill_count_] = {0, w.arrival_s, w.generated_tokens};
    ++prefill_count_;
    ++queue.head;
    --room;
  }
  queue.DropTaken();
  BeginPrefill(t_s);
}

void InferenceServer::WaitingQueue::DropTaken() {
  if (head == requests.size()) {
    requests.clear();
    head = 0;
  } else if (head >= kCompactAt && 2 * size_t{head} >= requests.size()) {
    // The consumed front is at least half the vector: moving the rest costs no more than
    // the pushes that made it (amortised O(1) a request).
    requests.erase(requests.begin(), requests.begin() + static_cast<std::ptrdiff_t>(head));
    head = 0;
  }
}

void InferenceServer::BeginPrefill(double t_s) {
  phase_ = Phase::kPrefill;
  prefill_work_s_ = settings_->model.PromptSeconds(prefill_tokens_);
  prefill_started_s_ = t_s;
  phase_since_s_ = t_s;
  RefreshPrefill(t_s);
}

void InferenceServer::RefreshPrefill(double t_s) {
  const InferencePowerModel& model = settings_->model;
  const GpuLimits& limits = decode_.limits();
  double f = limits.freq_mhz;
  prefill_cap_pending_ = false;
  double bite_at = prefill_started_s_ + settings_->cap_response_s;
  if (limits.cap_w > 0) {
    double capped = model.PromptFreqUnderCap(prefill_tokens_, limits.cap_w);
    if (capped < f) {
      if (t_s >= bite_at) {
        f = capped;
      } else {
        prefill_cap_pending_ = true;
      }
    }
  }
  prefill_slowdown_ = model.PromptSlowdown(f);
  power_w_ = model.ServerPromptW(prefill_tokens_, f);
  double end = t_s + prefill_work_s_ * prefill_slowdown_;
  next_event_s_ = prefill_cap_pending_ ? std::min(end, bite_at) : end;
}

void InferenceServer::AdvancePrefill(double t_s) {
  prefill_work_s_ = std::max(0.0, prefill_work_s_ - (t_s - phase_since_s_) / prefill_slowdown_);
  phase_since_s_ = t_s;
}

void InferenceServer::AdvanceDecode(double t_s) {
  const double done = (t_s - phase_since_s_) * decode_.at(decoding_count_).iterations_per_s;
  iterations_ += done;
  if (counting_) {
    counters_->decode_tokens += done * static_cast<double>(decoding_count_);
    counters_->steps += done;
  }
  phase_since_s_ = t_s;
}

ServerCounters InferenceServer::counters(double t_s) const {
  if (!counting_) return {};
  ServerCounters c = *counters_;
  if (phase_ == Phase::kDecode && t_s > phase_since_s_) {
    // Not past the next event: the batch has not changed since phase_since_s_.
    const double until = std::min(t_s, next_event_s_);
    const double iterations = (until - phase_since_s_) * decode_.at(decoding_count_).iterations_per_s;
    c.decode_tokens += iterations * static_cast<double>(decoding_count_);
    c.steps += iterations;
  }
  return c;
}

void InferenceServer::StartDecodeOrIdle(double t_s, ServedLog& log) {
  // Requests wait: read from this line of the object rather than from the queue's.
  if (waiting() > 0 && static_cast<int>(decoding_count_) < settings_->max_batch) {
    StartPrefill(t_s);
  } else if (decoding_count_ > 0) {
    phase_ = Phase::kDecode;
    phase_since_s_ = t_s;
    const DecodeStep& step = decode_.at(decoding_count_);
    power_w_ = step.server_w;
    next_event_s_ = t_s + (batch_[0].finish_iteration - iterations_) / step.iterations_per_s;
  } else {
    BecomeIdle(t_s, log);
  }
}

void InferenceServer::HandleEvent(double t_s, ServedLog& log) {
  if (phase_ == Phase::kPrefill) {
    AdvancePrefill(t_s);
    if (prefill_cap_pending_ && prefill_work_s_ > 1e-9) {
      RefreshPrefill(t_s);  // the power cap starts to bite
      return;
    }
    if (counting_) {
      counters_->prompt_tokens += prefill_tokens_;
      counters_->first_tokens += static_cast<int64_t>(prefill_count_);
      counters_->steps += 1;
    }
    // The prefill's requests follow the heap: each joins it where it is (k >= decoding_count_).
    const uint32_t prefill_end = decoding_count_ + prefill_count_;
    prefill_count_ = 0;
    for (uint32_t k = decoding_count_; k < prefill_end; ++k) {
      const Batched r = batch_[k];
      if (r.generated_tokens <= 1) {
        if (counting_) ++counters_->finished;
        log.latency_s.push_back(t_s - r.arrival_s);
        log.generated_tokens += r.generated_tokens;
        --outstanding_;
      } else {
        batch_[decoding_count_] = {iterations_ + (r.generated_tokens - 1), r.arrival_s, r.generated_tokens};
        ++decoding_count_;
        std::push_heap(batch_.get(), batch_.get() + decoding_count_, std::greater<>());
      }
    }
    StartDecodeOrIdle(t_s, log);
    return;
  }
  if (phase_ == Phase::kDecode) {
    AdvanceDecode(t_s);
    iterations_ = std::max(iterations_, batch_[0].finish_iteration);
    while (decoding_count_ > 0 && batch_[0].finish_iteration <= iterations_ + 1e-9) {
      log.latency_s.push_back(t_s - batch_[0].arrival_s);
      log.generated_tokens += batch_[0].generated_tokens;
      --outstanding_;
      if (counting_) ++counters_->finished;
      std::pop_heap(batch_.get(), batch_.get() + decoding_count_, std::greater<>());
      --decoding_count_;
    }
    StartDecodeOrIdle(t_s, log);
  }
}

void InferenceServer::SetLimits(const GpuLimits& limits, double t_s) {
  if (limits == decode_.limits()) return;
  if (phase_ == Phase::kDecode) AdvanceDecode(t_s);
  if (phase_ == Phase::kPrefill) AdvancePrefill(t_s);
  decode_.Reset(limits);
  if (phase_ == Phase::kDecode) {
    const DecodeStep& step = decode_.at(decoding_count_);
    power_w_ = step.server_w;
    next_event_s_ = t_s + (batch_[0].finish_iteration - iterations_) / step.iterations_per_s;
  } else if (phase_ == Phase::kPrefill) {
    RefreshPrefill(t_s);
  }
}

}  // namespace wattcut::polca
