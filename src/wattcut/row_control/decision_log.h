// The row controller's decision log: one JSON object per reading, as JSON lines (JSONL) that an
// operator reads, greps and replays (the integration test replays it through RowPowerPolicy):
//   {"time", "measured_at_s", "row_power_w", "fraction", "state", "brake", "stale_servers",
//    "stale_reasons": {SERVER: why its reading is stale},
//    "commands": [{"target": "low"|"high"|"brake", "lock_mhz" | "brake_on", "issued_at_s",
//                  "effective_at_s"}],
//    "mode": "shadow"|"enforce", "sent" | "would_send": [{"server", "mhz" | null}], "send_errors",
//    "training": [{"job_id", "target_w" | null, "state": "none"|"requested"|"complied"|"fallback",
//                  "detail"}],   (training: only in a row with training servers, training_targets.h)
//    "started": {"policy", "in_band", "state", "brake", "at_s"}}   (started: on a controller's
//                  first line only: its policy, whether it ran in-band, and the state it resumed
//                  at at_s, from which decision_log_audit.h replays the rest)
// "time" and the command times are the controller's clock (seconds since it started); "unix_time"
// is the wall clock of the reading.
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/polca/row_ceiling.h"
#include "wattcut/polca/row_power_policy.h"
#include "wattcut/row_control/row_state_resume.h"
#include "wattcut/row_control/training_targets.h"

namespace wattcut::row_control {

// A ceiling for one server's GPUs: set (mhz) or cleared (nullopt).
struct CeilingCommand {
  size_t server = 0;
  std::optional<int> mhz;
  double lease_s = 0;
  std::string reason;
};

// How a controller started: what replays its decisions (decision_log_audit.h).
struct ControllerStart {
  polca::PolicyKind policy = polca::PolicyKind::kPolca;
  bool in_band = false;
  RowPolicyState resumed;  // the state the policy resumed in (normal when nothing was on the agents)
  double resumed_at_s = 0;
  // The row's servers by class: what the headroom policy's level ceilings (polca/row_ceiling.h)
  // are computed from, so that an audit computes the same.
  polca::RowServers servers;
};

// What one period decided and did.
struct Decision {
  double now_s = 0;
  double unix_time_s = 0;
  double row_power_w = 0;
  double fraction = 0;
  double measured_at_s = 0;
  polca::PolicyLevel level = polca::PolicyLevel::kNormal;
  bool brake = false;
  bool shadow = false;
  std::vector<std::string> stale_servers;
  std::map<std::string, std::string> stale_reasons;  // server -> why (unreachable, garbage, 1e300 W)
  std::vector<polca::ControlCommand> commands;       // the policy's, this period
  std::vector<CeilingCommand> sent;                  // (would be, in shadow mode) sent
  std::vector<std::string> send_errors;
  std::vector<TrainingJobReport> training;  // one per training job of the row
  std::optional<ControllerStart> started;   // on the controller's first decision only
};

// One line of the log (no newline); `server_names` names CeilingCommand::server.
std::string DecisionLogLine(const Decision& decision, const std::vector<std::string>& server_names);

// An append-only JSONL file, flushed after every line (a controller killed mid-run leaves whole
// lines behind).
class DecisionLogFile {
 public:
  static Result<std::unique_ptr<DecisionLogFile>> Open(const std::string& path);
  ~DecisionLogFile();
  // False once a write failed (the error is kept; the controller goes on).
  bool Write(const std::string& line);
  const std::string& error() const { return error_; }

 private:
  DecisionLogFile(std::FILE* file, std::string path) : file_(file), path_(std::move(path)) {}
  std::FILE* file_;
  std::string path_;
  std::string error_;
};

}  // namespace wattcut::row_control
