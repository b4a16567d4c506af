// Power-capped training in the live row controller (docs/power-capped-training.md): the row's
// training jobs are asked for a plan under a power target on their planning server instead of
// having their clocks locked, and get the low-priority class's ceilings only when they do not
// comply. Every period (Run), for each job of the row's training servers:
//   * the target the row's level asks for: none at normal, policy.t1_training_w per GPU at T1,
//     policy.t2_training_w at T2 (low and high), peak 1-s power (what the row's breaker sees);
//   * wanted and not yet on the server (as far as the controller knows), or last sent lease/3
//     ago: PUT it with a lease (the controller's ceiling lease), else GET it; the answer says
//     whether every rank runs a plan under it (JobPowerTarget::complied);
//   * complied: no ceiling. Not complied: the job has control.training_response_s from the
//     target's PUT, or from the last change of its deployment version (a new plan, a straggler),
//     before it falls back; falls back at once when no plan of the job is that low ("met": false)
//     or when the planning server cannot be reached or refuses (the controller cannot know what
//     the job runs), except that a job that complied with the same target at most
//     control.max_reading_age_s ago is taken to run it still, as a stale reading counts at its
//     last value (its ranks keep their deployment while the server is away). A job that falls
//     back is asked again every period and loses its ceilings as soon as it complies;
//   * none wanted: a target this controller set (its reason starts with kTargetReasonPrefix) is
//     cleared; a target someone else set is left alone. A clear that fails is retried the next
//     period.
// The target's reason carries the row's state as a ceiling's does (row_state_resume.h), so a
// restarted controller resumes from the targets too (Resume). Like a ceiling, a target carries a
// lease, renewed every lease/3: one set by a controller that dies lapses on the planning server
// (the job returns to its selected plan) unless a restarted controller renews it first.
// In shadow mode nothing is sent and no job falls back; the report says what would be asked.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/row_control/planning_server_client.h"
#include "wattcut/row_control/row_state_resume.h"

namespace wattcut::row_control {

inline constexpr const char* kTargetReasonPrefix = "wattcut polca control: ";

// The planning server's calls, as TrainingTargets uses them (PlanningServerClient over HTTP).
struct TrainingCalls {
  std::function<Result<JobPowerTarget>(const std::string& job_id, double per_gpu_w, const std::string& reason,
                                       double lease_s)>
      set;
  std::function<Result<JobPowerTarget>(const std::string& job_id)> get;
  std::function<Result<JobPowerTarget>(const std::string& job_id)> clear;
};

enum class TrainingState {
  kNone,       // no target wanted
  kRequested,  // wanted, within the response time, not complied yet
  kComplied,   // every rank runs a plan under the target
  kFallback,   // the job's servers get the low-priority class's ceilings
};
const char* TrainingStateName(TrainingState state);  // "none", "requested", "complied", "fallback"

// One job in one period.
struct TrainingJobReport {
  std::string job_id;
  std::optional<double> target_w;  // the target the row wants for it (per GPU, peak 1-s)
  TrainingState state = TrainingState::kNone;
  std::string detail;  // why (an error, "waiting for ...", the lowest power when not met)
};

// The target a row at `level` asks of a training job; none at normal.
std::optional<double> TrainingTargetFor(polca::PolicyLevel level, const polca::PolicySpec& policy);
// The reason sent with a target: kTargetReasonPrefix, the row's state, its power.
std::string TrainingTargetReason(const RowPolicyState& state, double fraction);
// The row's state in a reason TrainingTargetReason wrote; nullopt for any other.
std::optional<RowPolicyState> ParseTrainingTargetReason(const std::string& reason);

class TrainingTargets {
 public:
  // `job_ids`: the row's training jobs (duplicates are dropped, the order kept).
  // `lease_s`: each target's lease (>= 1 s); `max_answer_age_s`: how long a compliance stands
  // without an answer.
  TrainingTargets(std::vector<std::string> job_ids, polca::PolicySpec policy, double response_s, double lease_s,
                  double max_answer_age_s, bool shadow, TrainingCalls calls);

  // Reads every job's target (a restarted controller): the row states in the targets this
  // controller set, as resume observations (ResumeState; a target has no lease, so 0 s left: a
  // ceiling of the same row wins).
  std::vector<ObservedCeiling> Resume();
  // Why Resume could not read a job's target (one message per job; empty when all were read).
  const std::vector<std::string>& resume_errors() const { return resume_errors_; }
  // One period; `state`: the row's, as decided this period; `fraction`: its power / budget.
  std::vector<TrainingJobReport> Run(const RowPolicyState& state, double fraction, double now_s);

  // Whether the job's servers get ceilings now (after the last Run).
  bool falls_back(const std::string& job_id) const;
  const std::vector<std::string>& job_ids() const { return job_ids_; }
  // The last Run's reports, in job order.
  const std::vector<TrainingJobReport>& last() const { return last_; }
  uint64_t call_errors() const { return call_errors_; }

 private:
  struct JobView {
    bool known = false;  // whether server_target / server_reason are what the server holds
    std::optional<double> server_target_w;
    std::string server_reason;
    std::optional<double> wanted_w;
    double clock_from_s = 0;    // the response time runs from here
    double sent_at_s = 0;       // the last PUT that the server took
    uint64_t version = 0;       // the deployment version last seen
    bool complied = false;      // in the last period
    double complied_at_s = -1;  // the last answer that said so, for wanted_w
    bool falls_back = false;
  };
  TrainingJobReport RunJob(const std::string& job_id, JobView& view, const RowPolicyState& state, double fraction,
                           double now_s);
  void Learn(JobView& view, const JobPowerTarget& answer, double now_s);

  std::vector<std::string> job_ids_;
  polca::PolicySpec policy_;
  double response_s_;
  double lease_s_;
  double max_answer_age_s_;
  bool shadow_;
  TrainingCalls calls_;
  std::map<std::string, JobView> views_;
  std::vector<TrainingJobReport> last_;
  std::vector<std::string> resume_errors_;
  uint64_t call_errors_ = 0;
};

}  // namespace wattcut::row_control
