// Background frontier computations. A job with tens of thousands of frontier points
// takes seconds to plan; the HTTP threads only enqueue work here and never wait for it.
// A fixed pool of threads takes tasks in submission order; `started` is called on the
// worker thread before a task runs (it may skip it), and each result goes to `done`, on
// the worker thread. No exception leaves a worker thread: whatever the planner throws
// (std::bad_alloc, std::length_error, std::system_error, anything) becomes the task's
// error, and a throwing callback is dropped.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "wattcut/base/mutex.h"
#include "wattcut/base/result.h"
#include "wattcut/plan/frontier.h"
#include "wattcut/plan/planner.h"
#include "wattcut/profile/profile.h"

namespace wattcut::server {

struct FrontierTask {
  std::string job_id;
  uint64_t generation = 0;                 // lets the job ignore results of superseded tasks
  std::shared_ptr<const Profile> profile;  // the job's, already parsed and checked
  PlannerOptions options;
};

class FrontierWorker {
 public:
  // False: skip the task (its job moved on or is gone); `done` is not called then.
  using Started = std::function<bool(const FrontierTask&)>;
  using Done = std::function<void(const FrontierTask&, Result<Frontier>, double seconds)>;

  FrontierWorker(int num_threads, Started started, Done done);
  ~FrontierWorker();  // Stop()
  FrontierWorker(const FrontierWorker&) = delete;
  FrontierWorker& operator=(const FrontierWorker&) = delete;

  void Submit(FrontierTask task);
  // Drops queued tasks, lets running ones finish, joins the threads.
  void Stop();

 private:
  void Run();

  Started started_;
  Done done_;
  Mutex mu_;
  CondVar cv_;
  std::deque<FrontierTask> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace wattcut::server
