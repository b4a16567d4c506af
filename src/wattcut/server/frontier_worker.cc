#include "wattcut/server/frontier_worker.h"

#include <chrono>
#include <exception>

namespace wattcut::server {

FrontierWorker::FrontierWorker(int num_threads, Done done) : done_(std::move(done)) {
  for (int i = 0; i < (num_threads < 1 ? 1 : num_threads); ++i) {
    threads_.emplace_back([this] { Run(); });
  }
}

FrontierWorker::~FrontierWorker() { Stop(); }

void FrontierWorker::Submit(FrontierTask task) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void FrontierWorker::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void FrontierWorker::Run() {
  for (;;) {
    FrontierTask task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    auto start = std::chrono::steady_clock::now();
    Result<Frontier> frontier = [&]() -> Result<Frontier> {
      // A planner that runs out of memory fails this job, not the server.
      try {
        return ComputeFrontier(*task.profile, task.options);
      } catch (const std::exception& e) {
        return Error{std::string("the planner failed: ") + e.what()};
      }
    }();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    done_(task, std::move(frontier), seconds);
  }
}

}  // namespace wattcut::server
