#include "wattcut/http/http_thread_pool.h"

#include <string>
#include <system_error>

namespace wattcut::http {

Status HttpThreadPool::Start(size_t num_threads) {
  threads_.reserve(num_threads);
  for (size_t i = 0; i < num_threads; ++i) {
    try {
      threads_.emplace_back([this] { Work(); });
    } catch (const std::system_error& e) {
      const size_t started = threads_.size();
      shutdown();
      return Error{"cannot start " + std::to_string(num_threads) + " HTTP threads (" + std::to_string(started) +
                   " started, then: " + e.what() +
                   "); ask for fewer HTTP threads and long polls, or raise the process's limits (ulimit -v, -u)"};
    }
  }
  return Status::Ok();
}

void HttpThreadPool::enqueue(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void HttpThreadPool::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void HttpThreadPool::Work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, and nothing left to run
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace wattcut::http
