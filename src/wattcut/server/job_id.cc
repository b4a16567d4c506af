#include "wattcut/server/job_id.h"

#include <ctime>

namespace wattcut::server {

namespace {

std::string SanitizeMetadata(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool safe =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    out += safe ? c : '_';
  }
  return out;
}

}  // namespace

std::string JobIdFor(const JobInfo& info, int64_t seq, double now_unix_s) {
  const std::time_t now = static_cast<std::time_t>(now_unix_s);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d-%H-%M-%S", &tm);
  std::string id = std::string(stamp) + "+dp" + std::to_string(info.dp_degree) + "+pp" +
                   std::to_string(info.pp_degree) + "+tp" + std::to_string(info.tp_degree) + "+perseus+" +
                   std::to_string(seq);
  if (info.job_metadata && !info.job_metadata->empty()) id += "+" + SanitizeMetadata(*info.job_metadata);
  return id;
}

}  // namespace wattcut::server
