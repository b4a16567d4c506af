// Times written as text, read as seconds since 1970-01-01 00:00:00 UTC: the civil calendar
// (proleptic Gregorian) and the two layouts wattcut's readers accept, the Azure traces'
// "YYYY-MM-DD HH:MM:SS[.fraction]" and ISO 8601 with an optional offset. One place, so that the
// request trace, the power trace and the telemetry readers read a date the same way.
#pragma once

#include <cstdint>
#include <string>

#include "wattcut/base/result.h"

namespace wattcut {

// Days from 1970-01-01 to year-month-day (proleptic Gregorian; month 1-12, day 1-31).
int64_t DaysFromCivil(int64_t year, int64_t month, int64_t day);
bool IsLeapYear(int64_t year);
// The days of `month` (1-12) of `year`.
int DaysInMonth(int64_t year, int month);

// Seconds since 1970-01-01 00:00:00 UTC for "YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM]" (a
// 'T' in place of the space is accepted; no offset: UTC); the error says what part is wrong.
Result<double> ParseTimestamp(const std::string& text);
// The 2024 Azure traces' form of `utc_s` (seconds since 1970 UTC, from 1970 to 9999), microseconds
// and the offset: "2024-05-10 00:00:00.009930+00:00"; ParseTimestamp reads it back to the microsecond.
std::string FormatTimestamp(double utc_s);

// Seconds since 1970-01-01 UTC for an ISO 8601 time "YYYY-MM-DD[T ]HH:MM[:SS[.fraction]]" with an
// optional "Z" or "+HH:MM" / "-HH:MM" offset; the error says what was expected.
Result<double> ParseIsoTime(const std::string& text);
// The same, but the time zone must be said ("Z", "+HH:MM" or "-HH:MM"): for a time a person types
// (a deadline), where a missing offset taken as UTC would move it by hours without a word.
Result<double> ParseIsoTimeWithZone(const std::string& text);

// Whether `text` starts like a date ("YYYY-"), so that a reader taking seconds or ISO 8601
// reads it as ISO 8601.
bool LooksLikeIsoDate(const std::string& text);

}  // namespace wattcut
