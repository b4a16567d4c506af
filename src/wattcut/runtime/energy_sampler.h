// A background sampler of a GPU's energy counter (mJ), with timestamps from a Clock, so that the
// energy of any interval can be read afterwards by interpolating between samples: the training
// thread only takes timestamps and never waits on the counter. On a real clock the samples come
// from a thread; on a simulated clock (ManualClock) from the clock itself, every interval of
// simulated time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#include "wattcut/base/clock.h"
#include "wattcut/base/result.h"
#include "wattcut/gpu/gpu_backend.h"

namespace wattcut {

struct EnergySample {
  double time_s = 0;  // midpoint of the counter read
  double energy_mj = 0;
};

class EnergySampler {
 public:
  // `backend` and `clock` must outlive the sampler.
  EnergySampler(GpuBackend& backend, int gpu, Clock& clock, double interval_s);
  ~EnergySampler();

  // Takes a first sample (failing when the counter cannot be read) and starts the thread.
  Status Start();
  void Stop();
  // One sample now, from the calling thread (to bracket an interval that just ended).
  Status SampleNow();
  // Energy (mJ) between t0 and t1, linearly interpolated between the samples around each end.
  // Fails when a time lies outside the samples taken.
  Result<double> EnergyBetweenMj(double t0_s, double t1_s) const;
  // Forgets samples before t (keeping the one just before it).
  void DropBefore(double t_s);
  size_t sample_count() const;
  // The widest clock bracket around one counter read so far (the two clock reads a sample's time
  // is the midpoint of): a sample's time is right to half of it, so at power P its energy is right
  // to P times half of it. Grows when the sampling thread is preempted mid-read.
  double widest_read_s() const;
  // The first error of the sampling thread, if any.
  std::string error() const;

 private:
  Result<double> EnergyAtMj(double t_s) const;  // under mutex_
  void Run();
  void SampleFromBackground();

  GpuBackend& backend_;
  const int gpu_;
  Clock& clock_;
  const double interval_s_;
  mutable std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::deque<EnergySample> samples_;
  double widest_read_s_ = 0;
  std::string error_;
  std::thread thread_;
  uint64_t periodic_id_ = 0;
};

}  // namespace wattcut
