#include "wattcut/base/iso_time.h"

#include <cmath>
#include <cstdio>

#include <cctype>

#include "wattcut/base/printable_text.h"

namespace wattcut {
namespace {

bool AllDigits(const std::string& s, size_t from, size_t count) {
  if (from + count > s.size()) return false;
  for (size_t i = from; i < from + count; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

}  // namespace

// After H. Hinnant's days-from-civil derivation.
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool IsLeapYear(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int64_t year, int month) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return kDays[month - 1] + (month == 2 && IsLeapYear(year) ? 1 : 0);
}

Result<double> ParseTimestamp(const std::string& text) {
  const std::string quoted = "'" + PrintableText(text) + "'";
  const std::string expected = "expected a timestamp 'YYYY-MM-DD HH:MM:SS[.fraction]', got " + quoted;
  // Fixed layout: 0123456789012345678
  //               YYYY-MM-DD HH:MM:SS
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || (text[10] != ' ' && text[10] != 'T') || text[13] != ':' ||
      text[16] != ':') {
    return Error{expected};
  }
  auto digits = [&](size_t from, size_t count, int64_t& out) {
    out = 0;
    for (size_t i = from; i < from + count; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  int64_t year, month, day, hour, minute, second;
  if (!digits(0, 4, year) || !digits(5, 2, month) || !digits(8, 2, day) || !digits(11, 2, hour) ||
      !digits(14, 2, minute) || !digits(17, 2, second)) {
    return Error{expected};
  }
  if (month < 1 || month > 12) return Error{"month out of range in " + quoted};
  if (day < 1 || day > DaysInMonth(year, static_cast<int>(month))) return Error{"day out of range in " + quoted};
  // Seconds 00 to 59: a leap second (:60) is no second of Unix time, and read as the next minute's
  // first it would put a row after the one that follows it.
  if (hour > 23 || minute > 59 || second > 59) {
    return Error{"time of day out of range in " + quoted + " (hours 00-23, minutes and seconds 00-59)"};
  }
  size_t at = 19;
  double fraction = 0;
  if (at < text.size() && text[at] == '.') {
    double scale = 0.1;
    for (++at; at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])); ++at) {
      fraction += (text[at] - '0') * scale;
      scale /= 10;
    }
    if (at == 20 || at > 29) return Error{expected};  // 1 to 9 fractional digits
  }
  // The UTC offset (2024 traces: "+00:00"): the time written is UTC + offset.
  int64_t offset_s = 0;
  if (at < text.size()) {
    const char sign = text[at];
    if (sign != '+' && sign != '-' && sign != 'Z') return Error{expected};
    if (sign == 'Z') {
      if (at + 1 != text.size()) return Error{"expected nothing after the UTC offset 'Z' in " + quoted};
    } else {
      int64_t offset_h, offset_min;
      if (at + 6 != text.size() || text[at + 3] != ':' || !digits(at + 1, 2, offset_h) ||
          !digits(at + 4, 2, offset_min)) {
        return Error{"expected a UTC offset Z, +HH:MM or -HH:MM after the time in " + quoted};
      }
      if (offset_h > 23 || offset_min > 59) return Error{"UTC offset out of range in " + quoted};
      offset_s = (sign == '+' ? 1 : -1) * (offset_h * 3600 + offset_min * 60);
    }
  }
  const int64_t days = DaysFromCivil(year, month, day);
  return static_cast<double>(days * 86400 + hour * 3600 + minute * 60 + second - offset_s) + fraction;
}

std::string FormatTimestamp(double utc_s) {
  const auto micros = static_cast<int64_t>(std::llround(utc_s * 1e6));
  const int64_t seconds = micros / 1'000'000;
  const int64_t in_day = seconds % 86400;
  // Civil date from days since 1970 (the inverse of DaysFromCivil, H. Hinnant's derivation).
  int64_t z = seconds / 86400 + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2);
  char text[128];
  std::snprintf(text, sizeof(text), "%04lld-%02lld-%02lld %02lld:%02lld:%02lld.%06lld+00:00", static_cast<long long>(y),
                static_cast<long long>(m), static_cast<long long>(d), static_cast<long long>(in_day / 3600),
                static_cast<long long>(in_day / 60 % 60), static_cast<long long>(in_day % 60),
                static_cast<long long>(micros % 1'000'000));
  return text;
}

Result<double> ParseIsoTime(const std::string& text) {
  const std::string expected =
      "expected an ISO 8601 UTC time 'YYYY-MM-DDTHH:MM[:SS[.fraction]][Z|+HH:MM]', got '" + PrintableText(text) + "'";
  std::string body = text;
  double offset_s = 0;
  if (!body.empty() && (body.back() == 'Z' || body.back() == 'z')) {
    body.pop_back();
  } else if (body.size() > 16 && (body[body.size() - 6] == '+' || body[body.size() - 6] == '-')) {
    // "+HH:MM" / "-HH:MM" after the minutes or the seconds.
    const size_t at = body.size() - 6;
    if (at < 16 || !AllDigits(body, at + 1, 2) || body[at + 3] != ':' || !AllDigits(body, at + 4, 2)) {
      return Error{expected};
    }
    const int hours = (body[at + 1] - '0') * 10 + (body[at + 2] - '0');
    const int minutes = (body[at + 4] - '0') * 10 + (body[at + 5] - '0');
    if (hours > 23 || minutes > 59) return Error{"UTC offset out of range in '" + PrintableText(text) + "'"};
    offset_s = (body[at] == '+' ? 1 : -1) * (hours * 3600.0 + minutes * 60.0);
    body.resize(at);
  }
  // ISO 8601 may leave the seconds out: "2026-12-09T00:00Z".
  if (body.size() == 16 && body[13] == ':') body += ":00";
  Result<double> t = ParseTimestamp(body);
  if (!t.ok()) {
    // ParseTimestamp's message names its own layout; say the one this reader accepts.
    if (t.error().message.rfind("expected", 0) == 0) return Error{expected};
    return t.error();
  }
  return *t - offset_s;  // local = UTC + offset
}

Result<double> ParseIsoTimeWithZone(const std::string& text) {
  Result<double> t = ParseIsoTime(text);
  if (!t.ok()) return t;
  const size_t n = text.size();
  const bool zulu = n > 0 && (text[n - 1] == 'Z' || text[n - 1] == 'z');
  const bool offset = n > 6 && (text[n - 6] == '+' || text[n - 6] == '-') && text[n - 3] == ':';
  if (zulu || offset) return t;
  return Error{"'" + PrintableText(text) + "' has no time zone: write '" + PrintableText(text) +
               "Z' for UTC, or its offset ('+01:00')"};
}

bool LooksLikeIsoDate(const std::string& text) { return text.size() >= 5 && AllDigits(text, 0, 4) && text[4] == '-'; }

}  // namespace wattcut
