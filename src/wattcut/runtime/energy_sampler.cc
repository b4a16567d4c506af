#include "wattcut/runtime/energy_sampler.h"

#include <algorithm>
#include <chrono>

namespace wattcut {

EnergySampler::EnergySampler(GpuBackend& backend, int gpu, Clock& clock, double interval_s)
    : backend_(backend), gpu_(gpu), clock_(clock), interval_s_(interval_s) {}

EnergySampler::~EnergySampler() { Stop(); }

Status EnergySampler::Start() {
  if (Status s = SampleNow(); !s.ok()) return s;
  // A simulated clock samples as its time passes; on a real one, a thread does.
  periodic_id_ = clock_.AddPeriodic(interval_s_, [this] { SampleFromBackground(); });
  if (periodic_id_ == 0) thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

void EnergySampler::Stop() {
  if (periodic_id_ != 0) {
    clock_.RemovePeriodic(periodic_id_);
    periodic_id_ = 0;
  }
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status EnergySampler::SampleNow() {
  const double before = clock_.NowS();
  auto energy = backend_.TotalEnergyMj(gpu_);
  const double after = clock_.NowS();
  if (!energy.ok()) return energy.error();
  std::lock_guard lock(mutex_);
  widest_read_s_ = std::max(widest_read_s_, after - before);
  const EnergySample sample{(before + after) / 2, static_cast<double>(*energy)};
  // Samples from two threads may finish out of order; keep them sorted by time.
  auto it = std::upper_bound(samples_.begin(), samples_.end(), sample.time_s,
                             [](double t, const EnergySample& s) { return t < s.time_s; });
  samples_.insert(it, sample);
  return Status::Ok();
}

void EnergySampler::Run() {
  const auto interval =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(interval_s_));
  auto next = std::chrono::steady_clock::now();
  while (true) {
    next += interval;
    {
      std::unique_lock lock(mutex_);
      if (stop_cv_.wait_until(lock, next, [&] { return stop_; })) return;
    }
    SampleFromBackground();
  }
}

void EnergySampler::SampleFromBackground() {
  if (Status s = SampleNow(); !s.ok()) {
    std::lock_guard lock(mutex_);
    if (error_.empty()) error_ = s.error().message;
  }
}

Result<double> EnergySampler::EnergyAtMj(double t_s) const {
  if (samples_.empty() || t_s < samples_.front().time_s || t_s > samples_.back().time_s) {
    return Error{"energy sampler: no samples around t=" + std::to_string(t_s) + " s"};
  }
  auto hi = std::lower_bound(samples_.begin(), samples_.end(), t_s,
                             [](const EnergySample& s, double t) { return s.time_s < t; });
  if (hi->time_s == t_s || hi == samples_.begin()) return hi->energy_mj;
  auto lo = std::prev(hi);
  const double span = hi->time_s - lo->time_s;
  if (span <= 0) return hi->energy_mj;
  return lo->energy_mj + (hi->energy_mj - lo->energy_mj) * (t_s - lo->time_s) / span;
}

Result<double> EnergySampler::EnergyBetweenMj(double t0_s, double t1_s) const {
  std::lock_guard lock(mutex_);
  auto e0 = EnergyAtMj(t0_s);
  if (!e0.ok()) return e0.error();
  auto e1 = EnergyAtMj(t1_s);
  if (!e1.ok()) return e1.error();
  return *e1 - *e0;
}

void EnergySampler::DropBefore(double t_s) {
  std::lock_guard lock(mutex_);
  while (samples_.size() > 1 && samples_[1].time_s <= t_s) samples_.pop_front();
}

double EnergySampler::widest_read_s() const {
  std::lock_guard lock(mutex_);
  return widest_read_s_;
}

size_t EnergySampler::sample_count() const {
  std::lock_guard lock(mutex_);
  return samples_.size();
}

std::string EnergySampler::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

}  // namespace wattcut
