// A serving request log in the Azure LLM inference trace format with each request's server, the
// load `polca calibrate --load` takes where vLLM's metrics were not recorded:
//
//   TIMESTAMP,ContextTokens,GeneratedTokens,server
//   2024-05-10 00:00:00.009930+00:00,374,44,node-a
//
// The rows follow trace_row_check.h's rules (TIMESTAMP in either Azure form, with or without an
// offset; positive token counts; not decreasing in time over the whole log; at most a week). A
// `server` column is required and must not be empty; the requests of one server are kept.
// Errors name FILE:LINE: column.
#pragma once

#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/polca/arrival_source.h"

namespace wattcut::polca {

struct ServerRequestLog {
  std::string server;
  double start_unix_s = 0;                // the server's first request
  std::vector<Arrival> arrivals;          // seconds after start_unix_s, high priority
  int64_t rows = 0;                       // rows of the whole log
  std::vector<std::string> servers_seen;  // every server in the log, sorted
};

// Whether a file's first line starts like the Azure trace format's header (TIMESTAMP,...): a log,
// or a trace without servers, which ParseRequestLog refuses for its missing server column.
bool LooksLikeRequestLog(const std::string& text);

// `server` empty: the log must hold one server only.
Result<ServerRequestLog> ParseRequestLog(const std::string& text, const std::string& source_name,
                                         const std::string& server);
Result<ServerRequestLog> ReadRequestLog(const std::string& path, const std::string& server);

}  // namespace wattcut::polca
