#include "wattcut/server/deadline_worker.h"

#include <exception>
#include <new>

namespace wattcut::server {

DeadlineWorker::DeadlineWorker(Done done, std::function<bool()> cancelled)
    : done_(std::move(done)), cancelled_(std::move(cancelled)), thread_([this] { Run(); }) {}

DeadlineWorker::~DeadlineWorker() { Stop(); }

void DeadlineWorker::Submit(DeadlineTask task) {
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    queue_.push_back(std::move(task));
  }
  cv_.NotifyOne();
}

void DeadlineWorker::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  stop_running_ = true;
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

void DeadlineWorker::Run() {
  for (;;) {
    DeadlineTask task;
    {
      MutexLock lock(mu_);
      while (!stopping_ && queue_.empty()) cv_.Wait(mu_);
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    if (task.cancel && task.cancel->load()) continue;  // a newer one, or a DELETE, came first
    const std::shared_ptr<std::atomic<bool>> flag = task.cancel;
    auto cancelled = [this, flag] {
      return stop_running_.load() || (flag && flag->load()) || (cancelled_ && cancelled_());
    };
    Status status = [&]() -> Status {
      try {
        return ComputeDeadline(task.following, *task.frontier, task.info, task.now_s, cancelled);
      } catch (const std::bad_alloc&) {
        return Error{"the deadline schedule's computation ran out of memory (std::bad_alloc)"};
      } catch (const std::exception& e) {
        return Error{std::string("the deadline schedule's computation failed: ") + e.what()};
      } catch (...) {
        return Error{"the deadline schedule's computation failed with an unknown exception"};
      }
    }();
    try {
      done_(std::move(task), std::move(status));
    } catch (...) {
      // Applying the outcome failed (out of memory, say): the job keeps what it had, and its next
      // deployment poll asks again.
    }
  }
}

}  // namespace wattcut::server
