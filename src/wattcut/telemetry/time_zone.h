// What a local time printed by a tool (nvidia-smi's "2024/05/01 14:00:00.123") means in UTC: a
// fixed offset ("+02:00", "-05:30", "Z") or a zone of the TZ database ("Europe/Berlin", from
// /usr/share/zoneinfo, Debian's tzdata package), whose offset changes with daylight saving time.
//
// In a zone, a local time may name no instant (the hour skipped when clocks go forward) or two
// (the hour repeated when they go back): Instants() returns every instant it names, in
// increasing order, and the reader decides (nvidia_smi_csv.h: a skipped time is refused, a
// repeated one is read as the first instant that keeps the GPU's readings increasing).
//
// A zone is looked up through the C library (localtime_r under TZ=NAME), so that the rules are
// the system's own; TZ is process-wide, so a ZoneScope sets it for as long as it lives, under a
// mutex, and puts the previous value back. Code that reads local time on another thread while
// a scope lives would see the zone: the readers hold a scope only while they convert a file.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::telemetry {

class LocalTimeZone {
 public:
  // UTC: what a reader assumes when it is told nothing (and says so in a note).
  static LocalTimeZone Utc();
  // "+HH:MM", "-HH:MM", "+HHMM", "Z" or "UTC" (a fixed offset); anything else is a zone name,
  // which must name a file of the TZ database. The error says which forms are accepted.
  static Result<LocalTimeZone> Parse(const std::string& text);

  bool fixed() const { return !zone_name_.has_value(); }
  // Seconds east of UTC (local = UTC + offset) when fixed; nullopt for a zone name.
  std::optional<int> fixed_offset_s() const { return fixed() ? std::optional<int>(offset_s_) : std::nullopt; }
  // "UTC+02:00" or "Europe/Berlin".
  std::string description() const;

 private:
  friend class ZoneScope;
  int offset_s_ = 0;                      // local = UTC + offset, when fixed
  std::optional<std::string> zone_name_;  // a TZ database name
};

// While alive, the zone's rules are the process's (for a zone name); Instants() converts.
class ZoneScope {
 public:
  explicit ZoneScope(const LocalTimeZone& zone);
  ~ZoneScope();
  ZoneScope(const ZoneScope&) = delete;
  ZoneScope& operator=(const ZoneScope&) = delete;

  // The Unix times (UTC seconds) whose local time is `local_s` (a local date and time counted as
  // seconds from 1970-01-01 00:00:00 local, fraction included): one for a fixed offset, zero,
  // one or two in a zone, increasing.
  std::vector<double> Instants(double local_s) const;

 private:
  int OffsetAt(long utc_s) const;

  const LocalTimeZone zone_;
  std::unique_lock<std::mutex> lock_;
  std::optional<std::string> previous_tz_;
};

}  // namespace wattcut::telemetry
