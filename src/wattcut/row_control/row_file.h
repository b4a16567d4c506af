// The row file of `wattcut polca control --row row.txt`: the servers of one row and their agents.
//
//   # row 12, rack A
//   gpu-a01  http://10.1.0.11:7788  high
//   gpu-a02  http://10.1.0.12:7788  low    # batch inference
//   gpu-t01  http://10.1.0.21:7788  training 2026-12-01-10-00-00+dp2+pp4+tp1+perseus+7
//
// One server per line, `NAME AGENT_URL PRIORITY` or `NAME AGENT_URL training JOB_ID`, separated by
// blanks; `#` starts a comment (a whole
// line or the rest of one); blank lines are allowed. NAME: 1-128 characters of letters, digits and
// `. _ - :`, each name once. AGENT_URL: `http://HOST:PORT` or `https://HOST:PORT` (a host name, an
// IPv4 address or a bracketed IPv6 one; a port 1-65535; a final `/` is dropped, no other path), each
// agent once (two lines for one agent would count its power twice). PRIORITY: `high` or `low`.
// `training JOB_ID`: the server runs (part of) that job of the planning server (`wattcut serve`);
// the controller asks the planning server for the job's plan under a power target instead of
// locking its clocks (docs/power-capped-training.md), and falls back to the low-priority class's
// ceilings; JOB_ID: 1-256 characters of letters, digits and `. _ - + :` (the server's job ids);
// several servers may run one job.
// A file without any server is refused. Every error names FILE:LINE and what was expected.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/polca/arrival_source.h"

namespace wattcut::row_control {

struct RowServer {
  std::string name;
  std::string agent_url;                              // "http://10.1.0.11:7788", without a final '/'
  polca::Priority priority = polca::Priority::kHigh;  // kLow for a training server (its fallback class)
  int line = 0;                                       // in the row file, for messages
  std::string training_job_id;                        // empty: an inference server
};

// Reads and parses the row file at `path`.
Result<std::vector<RowServer>> ReadRowFile(const std::string& path);
// Parses the text of a row file; messages name `path_for_messages`:LINE.
Result<std::vector<RowServer>> ParseRowFile(std::string_view text, const std::string& path_for_messages);

// Checks an agent URL as the row file takes it (http::SplitServiceUrl's rule, the port named);
// returns it without a final '/'.
Result<std::string> ParseAgentUrl(std::string_view url);
// The same check of another service's base URL; messages call it `what` ("planning server URL").
Result<std::string> ParseServiceUrl(std::string_view url, std::string_view what);

}  // namespace wattcut::row_control
