// The row file of `wattcut polca control --row row.txt`: the servers of one row and their agents.
//
//   # row 12, rack A
//   gpu-a01  http://10.1.0.11:7788  high
//   gpu-a02  http://10.1.0.12:7788  low    # batch inference
//
// One server per line, `NAME AGENT_URL PRIORITY`, separated by blanks; `#` starts a comment (a whole
// line or the rest of one); blank lines are allowed. NAME: 1-128 characters of letters, digits and
// `. _ - :`, each name once. AGENT_URL: `http://HOST:PORT` or `https://HOST:PORT` (a host name, an
// IPv4 address or a bracketed IPv6 one; a port 1-65535; a final `/` is dropped, no other path), each
// agent once (two lines for one agent would count its power twice). PRIORITY: `high` or `low`.
// A file without any server is refused. Every error names FILE:LINE and what was expected.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/polca/arrival_expansion.h"

namespace wattcut::row_control {

struct RowServer {
  std::string name;
  std::string agent_url;  // "http://10.1.0.11:7788", without a final '/'
  polca::Priority priority = polca::Priority::kHigh;
  int line = 0;  // in the row file, for messages
};

// Reads and parses the row file at `path`.
Result<std::vector<RowServer>> ReadRowFile(const std::string& path);
// Parses the text of a row file; messages name `path_for_messages`:LINE.
Result<std::vector<RowServer>> ParseRowFile(std::string_view text, const std::string& path_for_messages);

// Checks an agent URL as the row file takes it; returns it without a final '/'.
Result<std::string> ParseAgentUrl(std::string_view url);

}  // namespace wattcut::row_control
