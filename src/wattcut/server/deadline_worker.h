// Background deadline schedule computations (job_deadline.h): a schedule computed again after a
// restart or on a new frontier, and a replan. A deployment poll only submits one here and
// answers at once; the schedule in force (or the deployment, held) serves until the result is
// applied. One thread takes tasks in submission order. A task whose cancel flag is set is
// skipped; a running one is asked to stop through the scheduler's cancellation hook. No exception
// leaves the thread: whatever the computation throws becomes the task's error.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "wattcut/base/mutex.h"
#include "wattcut/base/result.h"
#include "wattcut/plan/frontier.h"
#include "wattcut/server/deadline_following.h"
#include "wattcut/server/http_api.h"

namespace wattcut::server {

struct DeadlineTask {
  enum class Why { kRestore, kNewFrontier, kReplan };
  Why why = Why::kNewFrontier;
  std::string job_id;
  uint64_t ticket = 0;          // the job's DeadlineComputations ticket
  DeadlineFollowing following;  // its spec in; its schedule (or error) out
  std::shared_ptr<const Frontier> frontier;
  JobInfo info;
  double now_s = 0;
  std::shared_ptr<std::atomic<bool>> cancel;
  // kReplan: what the poll that asked for it saw, for the server's log.
  double done_iterations = 0, expected_iterations = 0;
};

class DeadlineWorker {
 public:
  // Called on the worker thread with the task (its schedule computed, or not) and the computation's status.
  using Done = std::function<void(DeadlineTask, Status)>;
  // `cancelled`: asked besides the task's flag (the server stopping; a test's pause).
  DeadlineWorker(Done done, std::function<bool()> cancelled);
  ~DeadlineWorker();  // Stop()
  DeadlineWorker(const DeadlineWorker&) = delete;
  DeadlineWorker& operator=(const DeadlineWorker&) = delete;

  void Submit(DeadlineTask task);
  // Drops queued tasks, asks the running one to stop, joins the thread.
  void Stop();

 private:
  void Run();

  Done done_;
  std::function<bool()> cancelled_;
  Mutex mu_;
  CondVar cv_;
  std::deque<DeadlineTask> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::atomic<bool> stop_running_{false};
  std::thread thread_;
};

}  // namespace wattcut::server
