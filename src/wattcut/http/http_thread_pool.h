// The HTTP server's worker threads. httplib's ThreadPool starts its threads in its
// constructor and cannot say that one failed to start: the exception leaves a vector of
// running threads behind, which ends the process in std::terminate, or hangs it there when
// an address-space limit (ulimit -v, a container's) is what stopped the thread. This pool
// starts its threads in Start(), which returns an error naming how many it could start.
// Jobs run in the order they were queued; Shutdown() lets the queued ones finish.
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::http {

class HttpThreadPool : public httplib::TaskQueue {
 public:
  HttpThreadPool() = default;
  ~HttpThreadPool() override { shutdown(); }
  HttpThreadPool(const HttpThreadPool&) = delete;
  HttpThreadPool& operator=(const HttpThreadPool&) = delete;

  // Starts `num_threads` threads; on failure stops the ones started and says why.
  Status Start(size_t num_threads);
  size_t num_threads() const { return threads_.size(); }

  void enqueue(std::function<void()> job) override;
  // Runs the jobs already queued, then joins every thread.
  void shutdown() override;

 private:
  void Work();

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace wattcut::http
