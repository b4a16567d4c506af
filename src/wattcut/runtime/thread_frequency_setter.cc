#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "wattcut/runtime/frequency_setter.h"

namespace wattcut {
namespace {

class ThreadFrequencySetter final : public FrequencySetter {
 public:
  ThreadFrequencySetter(GpuBackend& backend, int gpu, double poll_interval_s)
      : backend_(backend), gpu_(gpu), poll_interval_s_(poll_interval_s) {}
  ~ThreadFrequencySetter() override { (void)Stop(); }

  void Start() {
    worker_ = std::thread([this] { Run(); });
  }

  void SetFrequency(int freq_mhz) override {
    // The same clock again is nothing to do, unless locking it failed: then it is tried again.
    if (freq_mhz == last_requested_ && !last_apply_failed_.load(std::memory_order_relaxed)) return;
    last_requested_ = freq_mhz;
    requested_mhz_.store(freq_mhz, std::memory_order_relaxed);
    request_seq_.fetch_add(1, std::memory_order_release);
    if (poll_interval_s_ <= 0) request_seq_.notify_one();  // polling workers look by themselves
  }

  Status WaitUntilApplied() override {
    const uint64_t target = request_seq_.load(std::memory_order_acquire);
    std::unique_lock lock(mutex_);
    handled_cv_.wait(lock, [&] { return handled_seq_ >= target || stopped_; });
    if (!last_apply_ok_) return Error{stats_.last_error};
    return Status::Ok();
  }

  Status Stop() override {
    if (stop_.exchange(true)) {
      std::lock_guard lock(mutex_);
      return reset_status_;
    }
    request_seq_.fetch_add(1, std::memory_order_release);
    request_seq_.notify_one();
    if (worker_.joinable()) worker_.join();
    std::lock_guard lock(mutex_);
    return reset_status_;
  }

  FrequencySetterStats stats() const override {
    std::lock_guard lock(mutex_);
    return stats_;
  }

  void NoteMemoryLockProblem(const std::string& message) {
    std::lock_guard lock(mutex_);
    stats_.last_error = message;
  }

 private:
  void Run() {
    // SCHED_BATCH (this thread only): waking it does not preempt the training thread.
    sched_param batch{};
    ::sched_setscheduler(0, SCHED_BATCH, &batch);
    uint64_t seen = 0;
    int applied = 0;
    const auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(poll_interval_s_));
    while (true) {
      if (poll_interval_s_ > 0) {
        while (request_seq_.load(std::memory_order_acquire) == seen && !stop_.load()) {
          std::this_thread::sleep_for(interval);
        }
      } else {
        request_seq_.wait(seen, std::memory_order_acquire);
      }
      seen = request_seq_.load(std::memory_order_acquire);
      if (stop_.load()) break;
      const int want = requested_mhz_.load(std::memory_order_relaxed);
      Status status = Status::Ok();
      const bool skip = want == applied;
      if (!skip) status = backend_.LockGpuClocks(gpu_, want, want);
      std::lock_guard lock(mutex_);
      ++stats_.requested;
      if (skip) {
        ++stats_.skipped;
      } else if (status.ok()) {
        applied = want;
        ++stats_.applied;
        stats_.applied_mhz = want;
      } else {
        ++stats_.failed;
        stats_.last_error = status.error().message;
      }
      last_apply_ok_ = status.ok();
      last_apply_failed_.store(!status.ok(), std::memory_order_relaxed);
      handled_seq_ = seen;
      handled_cv_.notify_all();
    }
    Status reset = backend_.ResetGpuClocks(gpu_);
    Status memory = backend_.ResetMemoryClocks(gpu_);
    std::lock_guard lock(mutex_);
    reset_status_ = !reset.ok() ? reset : memory;
    stopped_ = true;
    stats_.applied_mhz = 0;
    handled_cv_.notify_all();
  }

  GpuBackend& backend_;
  const int gpu_;
  const double poll_interval_s_;
  int last_requested_ = 0;                      // training thread only
  std::atomic<bool> last_apply_failed_{false};  // the worker's last lock failed (read without the mutex)
  std::atomic<int> requested_mhz_{0};
  std::atomic<uint64_t> request_seq_{0};
  std::atomic<bool> stop_{false};
  std::thread worker_;
  mutable std::mutex mutex_;
  std::condition_variable handled_cv_;
  uint64_t handled_seq_ = 0;
  bool last_apply_ok_ = true;
  bool stopped_ = false;
  Status reset_status_;
  FrequencySetterStats stats_;
};

}  // namespace

Result<std::unique_ptr<FrequencySetter>> StartThreadFrequencySetter(GpuBackend& backend, int gpu,
                                                                    bool require_memory_lock, double poll_interval_s) {
  auto count = backend.DeviceCount();
  if (!count.ok()) return count.error();
  if (Status s = CheckGpuIndex(gpu, *count); !s.ok()) return s.error();
  auto setter = std::make_unique<ThreadFrequencySetter>(backend, gpu, poll_interval_s);
  if (Status memory = LockMemoryClockToMax(backend, gpu); !memory.ok()) {
    if (require_memory_lock) return memory.error();
    setter->NoteMemoryLockProblem("memory clock not locked: " + memory.error().message);
  }
  setter->Start();
  return std::unique_ptr<FrequencySetter>(std::move(setter));
}

}  // namespace wattcut
