// Replays a decision log (decision_log.h) through the C++ row policy and says whether every logged
// state and command is what the policy decides for the logged readings: `wattcut polca audit`, the
// check an operator runs on a row's log and that the live end-to-end test runs on its own.
//
// The log holds one or more controller runs (the file is appended to across restarts), each
// starting at a line with "started" (the policy, in-band or not, and the state it resumed in).
// Each run's policy is made from the config (its thresholds, latencies and, for the headroom
// policy, window), resumed as the line says, and fed every line's reading: {measured_at_s,
// fraction, complete = no stale server} at "time". A line must then show the state and brake the
// policy holds, and exactly the commands it returned (target, clock or brake, issue and effective
// times): the log writes doubles exactly, so they are compared exactly.
//
// Bad input is an error naming the file, the line and the field; a log whose first line has no
// "started" (written before controllers logged it) is an error too, since nothing says which
// policy wrote it.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/polca/polca_config.h"

namespace wattcut::row_control {

struct DecisionLogAudit {
  int64_t runs = 0;                   // controller runs ("started" lines)
  int64_t decisions = 0;              // lines
  int64_t commands = 0;               // commands logged
  std::vector<std::string> policies;  // each run's, in order
  int64_t mismatched_lines = 0;
  std::vector<std::string> mismatches;  // "FILE:LINE: ..." for the first kMaxReportedMismatches
};

inline constexpr size_t kMaxReportedMismatches = 20;
// A log line longer than this is not one the controller wrote (a row of 10,000 servers, every one
// stale with a long reason, stays well under it).
inline constexpr size_t kMaxDecisionLogLineBytes = size_t{16} << 20;

// Replays the log read from `in` line by line (`source` names it in messages) with `config`.
Result<DecisionLogAudit> AuditDecisionLog(std::istream& in, const std::string& source,
                                          const polca::PolcaConfig& config);
// Opens the file at `path` (not a folder) and audits it.
Result<DecisionLogAudit> AuditDecisionLogFile(const std::string& path, const polca::PolcaConfig& config);

}  // namespace wattcut::row_control
