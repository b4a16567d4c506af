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

InferenceServer::InferenceServer(const InferenceServerSettings& settings, Priority priority)
    : power_w_(settings.idle_w),
      priority_(priority),
      settings_(&settings),
      decode_(settings.decode, GpuLimits{settings.model.max_freq_mhz(), 0}) {
  static_assert(sizeof(InferenceServer) == 192, "three cache lines: see the layout in server_model.h");
  // The batch never grows past max_batch: one allocation, made while the row is built, puts
  // the row's batches side by side instead of wherever a regrowth found room.
  decoding_.reserve(static_cast<size_t>(settings.max_batch));
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
  queue_.push_back({arrival.time_s, arrival.context_tokens, arrival.generated_tokens});
  ++outstanding_;
  if (phase_ == Phase::kIdle) {
    BecomeBusy(t_s);
    StartPrefill(t_s);
  } else if (phase_ == Phase::kDecode && static_cast<int>(decoding_.size()) < settings_->max_batch) {
    AdvanceDecode(t_s);
    StartPrefill(t_s);
  }
}

void InferenceServer::StartPrefill(double t_s) {
  const InferenceServerSettings& settings = *settings_;
  int room = settings.max_batch - static_cast<int>(decoding_.size());
  prefill_count_ = 0;
  prefill_tokens_ = 0;
  while (queue_head_ + prefill_count_ < queue_.size() && room > 0) {
    const Waiting& w = queue_[queue_head_ + prefill_count_];
    if (prefill_count_ > 0 && prefill_tokens_ + w.context_tokens > settings.max_prefill_tokens) break;
    prefill_tokens_ += w.context_tokens;
    ++prefill_count_;
    --room;
  }
  phase_ = Phase::kPrefill;
  prefill_work_s_ = settings.model.PromptSeconds(prefill_tokens_);
  prefill_started_s_ = t_s;
  prefill_since_s_ = t_s;
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

void InferenceServer::DropPrefilled() {
  queue_head_ += prefill_count_;
  prefill_count_ = 0;
  if (queue_head_ == queue_.size()) {
    queue_.clear();
    queue_head_ = 0;
  } else if (queue_head_ >= kQueueCompactAt && 2 * size_t{queue_head_} >= queue_.size()) {
    // The consumed front is at least half the vector: moving the rest costs no more than
    // the pushes that made it (amortised O(1) a request).
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(queue_head_));
    queue_head_ = 0;
  }
}

void InferenceServer::AdvancePrefill(double t_s) {
  prefill_work_s_ = std::max(0.0, prefill_work_s_ - (t_s - prefill_since_s_) / prefill_slowdown_);
  prefill_since_s_ = t_s;
}

void InferenceServer::AdvanceDecode(double t_s) {
  const double done = (t_s - decode_since_s_) * decode_.at(decoding_.size()).iterations_per_s;
  iterations_ += done;
  counters_.decode_tokens += done * static_cast<double>(decoding_.size());
  decode_since_s_ = t_s;
}

ServerCounters InferenceServer::counters(double t_s) const {
  ServerCounters c = counters_;
  if (phase_ == Phase::kDecode && t_s > decode_since_s_) {
    // Not past the next event: the batch has not changed since decode_since_s_.
    const double until = std::min(t_s, next_event_s_);
    c.decode_tokens += (until - decode_since_s_) * decode_.at(decoding_.size()).iterations_per_s *
                       static_cast<double>(decoding_.size());
  }
  return c;
}

void InferenceServer::StartDecodeOrIdle(double t_s, ServedLog& log) {
  // Requests wait (outside a prefill, every outstanding request either waits or decodes), read
  // from this line of the object rather than from the queue's.
  if (outstanding_ > static_cast<int>(decoding_.size()) && static_cast<int>(decoding_.size()) < settings_->max_batch) {
    StartPrefill(t_s);
  } else if (!decoding_.empty()) {
    phase_ = Phase::kDecode;
    decode_since_s_ = t_s;
    const DecodeStep& step = decode_.at(decoding_.size());
    power_w_ = step.server_w;
    next_event_s_ = t_s + (decoding_.front().finish_iteration - iterations_) / step.iterations_per_s;
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
    counters_.prompt_tokens += prefill_tokens_;
    counters_.first_tokens += static_cast<int64_t>(prefill_count_);
    for (size_t k = queue_head_; k < queue_head_ + prefill_count_; ++k) {
      const Waiting& w = queue_[k];
      if (w.generated_tokens <= 1) {
        ++counters_.finished;
        log.latency_s.push_back(t_s - w.arrival_s);
        log.generated_tokens += w.generated_tokens;
        --outstanding_;
      } else {
        decoding_.push_back({iterations_ + (w.generated_tokens - 1), w.arrival_s, w.generated_tokens});
        std::push_heap(decoding_.begin(), decoding_.end(), std::greater<>());
      }
    }
    DropPrefilled();
    StartDecodeOrIdle(t_s, log);
    return;
  }
  if (phase_ == Phase::kDecode) {
    AdvanceDecode(t_s);
    iterations_ = std::max(iterations_, decoding_.front().finish_iteration);
    while (!decoding_.empty() && decoding_.front().finish_iteration <= iterations_ + 1e-9) {
      log.latency_s.push_back(t_s - decoding_.front().arrival_s);
      log.generated_tokens += decoding_.front().generated_tokens;
      --outstanding_;
      ++counters_.finished;
      std::pop_heap(decoding_.begin(), decoding_.end(), std::greater<>());
      decoding_.pop_back();
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
    const DecodeStep& step = decode_.at(decoding_.size());
    power_w_ = step.server_w;
    next_event_s_ = t_s + (decoding_.front().finish_iteration - iterations_) / step.iterations_per_s;
  } else if (phase_ == Phase::kPrefill) {
    RefreshPrefill(t_s);
  }
}

}  // namespace wattcut::polca
