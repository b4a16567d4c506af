// Recorded per-server power, the input of `wattcut polca replay` (power_trace_replay.h): one
// reading per row,
//
//   time,server,power_w[,priority]
//   2024-05-01T12:00:00Z,node-a,4210.5,high
//   1714564801.0,node-a,4388,high
//
// as Prometheus or DCGM exports give it. `time` is seconds (a float: Unix time or any other
// origin) or an ISO 8601 UTC time "YYYY-MM-DD[T ]HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM]"; every
// row uses the form of the first. `power_w` is the whole server's power in watts (finite,
// >= 0, at most kMaxServerPowerW). `priority`, when the column is there, is `high` or `low`
// on every row and never changes for a server; without it the servers have no priority and
// the replay assigns them (PowerTraceReplay: the config's low_priority_share). Rows of
// different servers may come in any order (exports are often grouped per series); the
// readings of one server must be in increasing time. Other columns are refused (a typo of
// `priority` would otherwise be ignored silently). Every error names FILE:LINE: column and
// what was expected; values quoted go through PrintableText.
#pragma once

#include <string>
#include <vector>

#include "wattcut/base/iso_time.h"
#include "wattcut/base/result.h"
#include "wattcut/polca/arrival_source.h"
#include "wattcut/polca/row_limits.h"  // kMaxServerPowerW

namespace wattcut {
class CsvTable;
}

namespace wattcut::polca {

struct PowerSample {
  double time_s = 0;  // seconds after the trace's first reading
  double power_w = 0;
};

struct TracedServer {
  std::string name;
  bool priority_given = false;  // the file had a priority column
  Priority priority = Priority::kHigh;
  std::vector<PowerSample> samples;  // increasing time
};

class PowerTrace {
 public:
  static Result<PowerTrace> Read(const std::string& path);
  // Same, from CSV text; `source_name` stands for the file in messages.
  static Result<PowerTrace> Parse(const std::string& text, const std::string& source_name);
  // From readings already read elsewhere (telemetry_power_trace.h): each server's samples in
  // increasing time, in any one origin (Unix seconds); they become seconds after the earliest
  // reading. `start_time` says what that reading was. Names must be distinct, non-empty and
  // without control bytes, powers in [0, kMaxServerPowerW], at most kMaxServersPerRow servers and
  // kMaxDurationS, as for the CSV; the error names the server.
  static Result<PowerTrace> FromServers(std::string name, std::string start_time, std::vector<TracedServer> servers);

  const std::string& name() const { return name_; }
  // In the order of their first row.
  const std::vector<TracedServer>& servers() const { return servers_; }
  bool priorities_given() const { return priorities_given_; }
  // Time from the first reading to the last of any server.
  double span_s() const { return span_s_; }
  // The first reading's time as written in the file.
  const std::string& start_time() const { return start_time_; }
  // The median time between consecutive readings of one server: the trace's own telemetry
  // period (0 when no server has two readings).
  double sample_interval_s() const { return sample_interval_s_; }

 private:
  struct Builder;

  std::string name_;
  std::string start_time_;
  bool priorities_given_ = false;
  double span_s_ = 0;
  double sample_interval_s_ = 0;
  std::vector<TracedServer> servers_;
};

// base/iso_time.h; named here for polca's callers.
using wattcut::ParseIsoTime;

}  // namespace wattcut::polca
