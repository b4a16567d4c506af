// The live POLCA row controller: the simulator's RowPowerPolicy (polca/row_power_policy.h) driven
// by a real row. Every telemetry period (RunPeriod):
//   1. read: every server's power from its agent; a server that does not answer in time is a
//      stale reading and counts at its last reading while that is younger than
//      control.max_reading_age_s, then at the highest reading it ever had (a server nobody can
//      see may well be at its peak; its last reading may be from a quiet moment);
//   2. decide: the row's power as a fraction of the budget goes to the policy, measured at the
//      time of the oldest reading it contains and marked incomplete when a server's is missing, so
//      a reading with a stale server may escalate or brake, never release. A reading no server
//      can draw (negative, not finite, or above kMaxReadingOverProvisioned x its provisioned
//      power: a confused agent's 1e300 W) is stale too, not a brake; each stale server's reason
//      goes to the decision log;
//   3. actuate: the policy's commands take effect at their effective time (control_actuation.h:
//      the out-of-band latency is modelled by holding them; with in-band control the latency is 0)
//      and become one ceiling per server: the brake clock on every server while braked, else its
//      priority class's lock, else none. A ceiling is sent when it changes, and again every
//      lease/3 so that its lease never runs out while the controller lives; a failed send is
//      retried the next period and counted. In shadow mode nothing is sent.
//      A training server (row_file.h: `training JOB_ID`) gets no lock: its job is asked for a plan
//      under a power target instead (training_targets.h), and gets its class's (low priority)
//      ceiling only while the job does not comply; the brake clock, like every server.
//   4. log: one decision (decision_log.h) per reading.
// The row's state lives on the agents: each ceiling's reason carries it (row_state_resume.h), a
// controller that dies leaves the ceilings in force until their lease runs out, and a restarted
// one resumes from them (Resume) instead of from normal.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/polca/control_actuation.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/row_power_policy.h"
#include "wattcut/row_control/decision_log.h"
#include "wattcut/row_control/row_state_resume.h"

namespace wattcut::row_control {

struct ControlledServer {
  std::string name;
  polca::Priority priority = polca::Priority::kHigh;
  std::string training_job_id;  // empty: inference
};

// The row's agents as the controller uses them (one entry per server, in the row's order);
// row_agent_client.h's RowAgents provides them over HTTP.
struct RowCalls {
  std::function<std::vector<Result<double>>()> read_power_w;
  std::function<std::vector<Status>(const std::vector<CeilingCommand>&)> send;
  std::function<std::vector<Result<std::vector<ObservedCeiling>>>()> read_ceilings;
  TrainingCalls training;  // the planning server's; needed when a server trains
};

struct RowControllerOptions {
  polca::PolcaConfig config;
  polca::PolicyKind policy = polca::PolicyKind::kPolca;
  bool shadow = false;         // decide and log, send nothing
  bool in_band = false;        // commands take effect when sent (the policy is told a latency of 0)
  double ceiling_lease_s = 0;  // 0: max(30 s, 10 telemetry periods)
  std::function<void(const std::string& json_line)> log;  // the decision log; may be empty
};

// A server's reading above this many times row.provisioned_w_per_server is not a physical
// reading: no server draws twice what its supply is provisioned for.
inline constexpr double kMaxReadingOverProvisioned = 2.0;

class RowController {
 public:
  RowController(RowControllerOptions options, std::vector<ControlledServer> servers, RowCalls calls);

  // Resumes from the ceilings the agents hold, and the power targets of the row's training jobs
  // (a restarted controller); the state it resumed. Servers that cannot be read are skipped
  // (their ceilings run out or are replaced).
  RowPolicyState Resume(double now_s);
  // One period at `now_s` (the controller's clock, never decreasing); `unix_time_s` goes to the log.
  Decision RunPeriod(double now_s, double unix_time_s = 0);

  const polca::RowPowerPolicy& policy() const { return policy_; }
  const TrainingTargets& training() const { return training_; }
  double ceiling_lease_s() const { return lease_s_; }
  double row_budget_w() const { return budget_w_; }
  // Prometheus text of the controller's counters and gauges.
  std::string RenderMetrics() const;

 private:
  std::optional<int> DesiredCeiling(const ControlledServer& server) const;
  // Why `reading` is not a server's power (empty when it is).
  static std::string BadReading(const Result<double>& reading, double max_w);
  static polca::RowServers ServersByClass(const std::vector<ControlledServer>& servers);
  static std::vector<std::string> TrainingJobs(const std::vector<ControlledServer>& servers);

  RowControllerOptions options_;
  std::vector<ControlledServer> servers_;
  RowCalls calls_;
  polca::RowPowerPolicy policy_;
  polca::ControlActuation actuation_;
  TrainingTargets training_;
  double budget_w_ = 0;
  double lease_s_ = 0;
  // Logged with the first decision (Resume updates it), then cleared.
  std::optional<ControllerStart> start_;

  struct ServerView {
    bool seen = false;
    double last_w = 0;
    double last_at_s = 0;
    double peak_w = 0;
    bool sent_known = false;  // whether `sent_mhz` is what the agent holds
    std::optional<int> sent_mhz;
    double sent_at_s = 0;
  };
  std::vector<ServerView> views_;

  // Metrics.
  double last_now_s_ = -1;
  Decision last_;
  std::map<std::string, double> seconds_in_state_;
  uint64_t stale_readings_ = 0;
  uint64_t command_errors_ = 0;
  uint64_t ceilings_sent_ = 0;
  uint64_t periods_ = 0;
};

}  // namespace wattcut::row_control
