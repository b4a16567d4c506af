#include "wattcut/telemetry/time_zone.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>

#include "wattcut/base/printable_text.h"

namespace wattcut::telemetry {
namespace {

constexpr const char* kZoneInfoDir = "/usr/share/zoneinfo/";

std::mutex& TzMutex() {
  static std::mutex mu;
  return mu;
}

bool Digits(const std::string& s, size_t from, size_t count) {
  if (from + count > s.size()) return false;
  for (size_t i = from; i < from + count; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

// A zone name as the TZ database spells one: letters, digits, '/', '_', '-', '+'; no "..".
bool ZoneNameShape(const std::string& name) {
  if (name.empty() || name.size() > 64 || name.front() == '/' || name.find("..") != std::string::npos) return false;
  for (unsigned char c : name) {
    if (!std::isalnum(c) && c != '/' && c != '_' && c != '-' && c != '+') return false;
  }
  return true;
}

// Whether the file starts with the TZif magic (RFC 8536).
bool IsTzifFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {0, 0, 0, 0};
  in.read(magic, 4);
  return in.gcount() == 4 && std::string(magic, 4) == "TZif";
}

}  // namespace

LocalTimeZone LocalTimeZone::Utc() { return LocalTimeZone(); }

Result<LocalTimeZone> LocalTimeZone::Parse(const std::string& text) {
  LocalTimeZone zone;
  if (text == "Z" || text == "UTC") return zone;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    // +HH:MM or +HHMM
    const bool colon = text.size() == 6 && text[3] == ':';
    const bool plain = text.size() == 5;
    if ((!colon && !plain) || !Digits(text, 1, 2) || !Digits(text, colon ? 4 : 3, 2)) {
      return Error{"expected a UTC offset '+HH:MM' or '-HH:MM', got '" + PrintableText(text) + "'"};
    }
    const int hours = std::stoi(text.substr(1, 2));
    const int minutes = std::stoi(text.substr(colon ? 4 : 3, 2));
    if (hours > 14 || minutes > 59) {
      return Error{"UTC offset out of range (at most +-14:00): '" + PrintableText(text) + "'"};
    }
    zone.offset_s_ = (text[0] == '+' ? 1 : -1) * (hours * 3600 + minutes * 60);
    return zone;
  }
  if (!ZoneNameShape(text)) {
    return Error{"expected a UTC offset ('+02:00', '-05:30', 'Z') or a time zone name ('Europe/Berlin'), got '" +
                 PrintableText(text) + "'"};
  }
  if (!IsTzifFile(kZoneInfoDir + text)) {
    return Error::NotFound("time zone '" + PrintableText(text) + "' is not in the TZ database (" + kZoneInfoDir +
                           "; install Debian's tzdata package, or give a UTC offset like '+02:00')");
  }
  zone.zone_name_ = text;
  return zone;
}

std::string LocalTimeZone::description() const {
  if (zone_name_) return *zone_name_;
  const int a = std::abs(offset_s_);
  char text[16];
  std::snprintf(text, sizeof text, "UTC%c%02d:%02d", offset_s_ < 0 ? '-' : '+', a / 3600, a / 60 % 60);
  return text;
}

ZoneScope::ZoneScope(const LocalTimeZone& zone) : zone_(zone) {
  if (zone_.fixed()) return;
  lock_ = std::unique_lock<std::mutex>(TzMutex());
  if (const char* tz = std::getenv("TZ")) previous_tz_ = tz;
  // The leading ':' is glibc's "a file of the database" form.
  setenv("TZ", (":" + *zone_.zone_name_).c_str(), 1);
  tzset();
}

ZoneScope::~ZoneScope() {
  if (zone_.fixed()) return;
  if (previous_tz_) {
    setenv("TZ", previous_tz_->c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
}

int ZoneScope::OffsetAt(long utc_s) const {
  const time_t t = static_cast<time_t>(utc_s);
  struct tm local {};
  if (localtime_r(&t, &local) == nullptr) return 0;
  return static_cast<int>(local.tm_gmtoff);
}

std::vector<double> ZoneScope::Instants(double local_s) const {
  if (zone_.fixed()) return {local_s - zone_.offset_s_};
  // The offsets a day either side are the only ones a local time can be read with (zones change
  // their offset at most once in a day); each that maps back to `local_s` gives an instant.
  const long whole = static_cast<long>(std::floor(local_s));
  const int before = OffsetAt(whole - 86400);
  const int after = OffsetAt(whole + 86400);
  std::vector<double> instants;
  std::vector<int> offsets = {before};
  if (after != before) offsets.push_back(after);
  for (int offset : offsets) {
    if (OffsetAt(whole - offset) == offset) instants.push_back(local_s - offset);
  }
  if (instants.size() == 2 && instants[1] < instants[0]) std::swap(instants[0], instants[1]);
  return instants;
}

}  // namespace wattcut::telemetry
