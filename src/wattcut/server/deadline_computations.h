// The deadline schedule computations of one job (job_deadline.h): each runs off the job's lock, so
// the job has to know which one is the newest when it ends. The job owns one of these, under its
// lock. At most one computation is current: beginning one cancels the one before (its flag is
// set; it may still finish, and IsCurrent then says its result is stale), and a DELETE of the
// schedule or of the job cancels the current one.
//
// What the job's deployment does meanwhile (`Hold`): a schedule computed again on a new frontier
// holds it (job_deployments.h: Redeploy): without it, the ranks would be sent the uncapped plan,
// then the scheduled one again a moment later. After a restart the deployment's version is the
// stored one but what it holds is not known until the schedule is back (its cap was in it): a rank
// that asks for it then is told to keep its plan and ask again (kUnavailable). A replan holds
// nothing: the schedule it replaces still caps the job meanwhile, and so does a PUT's.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace wattcut::server {

class DeadlineComputations {
 public:
  enum class Hold { kNothing, kDeployment, kDeploymentNotKnown };

  // A computation begins with `cancel` as its flag; returns its ticket.
  uint64_t Begin(std::shared_ptr<std::atomic<bool>> cancel, Hold hold) {
    Cancel();
    cancel_ = std::move(cancel);
    hold_ = hold;
    return current_ = ++issued_;
  }
  // Whether the computation of `ticket` is still the job's newest (none began or was cancelled since).
  bool IsCurrent(uint64_t ticket) const { return cancel_ != nullptr && ticket == current_; }
  // The computation of `ticket` ended (stale or not): nothing is in flight if it was current.
  void End(uint64_t ticket) {
    if (ticket != current_) return;
    cancel_.reset();
    hold_ = Hold::kNothing;
  }
  // Cancels the current computation, if any.
  void Cancel() {
    if (cancel_) cancel_->store(true);
    cancel_.reset();
    hold_ = Hold::kNothing;
  }
  bool in_flight() const { return cancel_ != nullptr; }
  bool holds_deployment() const { return cancel_ != nullptr && hold_ != Hold::kNothing; }
  bool deployment_not_known() const { return cancel_ != nullptr && hold_ == Hold::kDeploymentNotKnown; }

 private:
  uint64_t issued_ = 0;
  uint64_t current_ = 0;
  std::shared_ptr<std::atomic<bool>> cancel_;
  Hold hold_ = Hold::kNothing;
};

}  // namespace wattcut::server
