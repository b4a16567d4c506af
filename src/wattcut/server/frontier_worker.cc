#include "wattcut/server/frontier_worker.h"

#include <malloc.h>

#include <chrono>
#include <exception>
#include <new>

#include "wattcut/plan/frontier_power.h"

namespace wattcut::server {

FrontierWorker::FrontierWorker(int num_threads, Started started, Done done)
    : started_(std::move(started)), done_(std::move(done)) {
  for (int i = 0; i < (num_threads < 1 ? 1 : num_threads); ++i) {
    threads_.emplace_back([this] { Run(); });
  }
}

FrontierWorker::~FrontierWorker() { Stop(); }

void FrontierWorker::Submit(FrontierTask task) {
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    queue_.push_back(std::move(task));
  }
  cv_.NotifyOne();
}

void FrontierWorker::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  cv_.NotifyAll();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void FrontierWorker::Run() {
  for (;;) {
    FrontierTask task;
    {
      MutexLock lock(mu_);
      while (!stopping_ && queue_.empty()) cv_.Wait(mu_);
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      if (started_ && !started_(task)) continue;
    } catch (...) {
      // The task runs anyway: not recording its start only weakens the crash-loop count.
    }
    auto start = std::chrono::steady_clock::now();
    Result<Frontier> frontier = [&]() -> Result<Frontier> {
      // A planner that runs out of memory (or fails in any other way) fails this job, not
      // the server.
      try {
        // With every point's peak 1-s power, as `wattcut frontier` writes it (stored with it).
        return ComputeFrontierWithPeakPowersFromDeviceProfile(*task.profile, task.options);
      } catch (const std::bad_alloc&) {
        return Error{
            "the planner ran out of memory (std::bad_alloc): use a coarser unit_time_s "
            "or fewer microbatches"};
      } catch (const std::exception& e) {
        return Error{std::string("the planner failed: ") + e.what()};
      } catch (...) {
        return Error{"the planner failed with an unknown exception"};
      }
    }();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    try {
      done_(task, std::move(frontier), seconds);
    } catch (...) {
      // Storing the outcome failed (out of memory while serialising it, say); the job keeps
      // its previous state, and the thread goes on with the next task.
    }
    // The planner's tables were freed on this thread: give the pages back to the system
    // rather than keep them in this thread's malloc arena until the next computation.
    malloc_trim(0);
  }
}

}  // namespace wattcut::server
