#include "wattcut/row_control/row_file.h"

#include "wattcut/polca/row_limits.h"

#include <cctype>
#include <fstream>
#include <map>
#include <sstream>

#include "wattcut/base/printable_text.h"
#include "wattcut/http/service_url.h"

namespace wattcut::row_control {

namespace {

constexpr size_t kMaxNameChars = 128;
constexpr size_t kMaxLineChars = 4096;
constexpr size_t kMaxJobIdChars = 256;
constexpr const char* kLineForm =
    "expected 'NAME AGENT_URL PRIORITY' (PRIORITY 'high' or 'low') or 'NAME AGENT_URL training JOB_ID'";

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t begin = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > begin) fields.push_back(line.substr(begin, i - begin));
  }
  return fields;
}

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-' || c == ':';
}

bool IsJobIdChar(char c) { return IsNameChar(c) || c == '+'; }

}  // namespace

Result<std::string> ParseAgentUrl(std::string_view url) { return ParseServiceUrl(url, "agent URL"); }

Result<std::string> ParseServiceUrl(std::string_view url, std::string_view what) {
  auto split = http::SplitServiceUrl(url, what);
  if (!split.ok()) return split.error();
  return split->url;
}

Result<std::vector<RowServer>> ParseRowFile(std::string_view text, const std::string& path) {
  std::vector<RowServer> servers;
  std::map<std::string, int, std::less<>> name_lines;
  std::map<std::string, int, std::less<>> url_lines;
  int line_number = 0;
  size_t position = 0;
  while (position < text.size()) {
    size_t end = text.find('\n', position);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(position, end - position);
    position = end + 1;
    ++line_number;
    const std::string where = path + ":" + std::to_string(line_number) + ": ";
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > kMaxLineChars) {
      return Error{where + "a line of more than " + std::to_string(kMaxLineChars) + " characters; " + kLineForm};
    }
    size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    for (char c : line) {
      if (c != '\t' && (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)) {
        return Error{where + "a byte that is not printable ASCII (" + PrintableText(std::string(1, c)) + "); " +
                     kLineForm};
      }
    }
    std::vector<std::string_view> fields = Fields(line);
    if (fields.empty()) continue;
    if (fields.size() == 1) return Error{where + "missing AGENT_URL and PRIORITY; " + kLineForm};
    if (fields.size() == 2) return Error{where + "missing PRIORITY; " + kLineForm};
    const bool training = fields[2] == "training";
    if (training && fields.size() == 3) return Error{where + "missing JOB_ID after 'training'; " + kLineForm};
    if (fields.size() > (training ? 4u : 3u)) {
      return Error{where + "an extra field '" + PrintableText(fields[training ? 4 : 3], 100) + "'; " + kLineForm +
                   " (a comment starts with '#')"};
    }
    RowServer server;
    server.line = line_number;
    std::string_view name = fields[0];
    if (name.size() > kMaxNameChars) {
      return Error{where + "server name of " + std::to_string(name.size()) + " characters; expected at most " +
                   std::to_string(kMaxNameChars)};
    }
    for (char c : name) {
      if (!IsNameChar(c)) {
        return Error{where + "server name '" + PrintableText(name, 100) + "' holds '" + std::string(1, c) +
                     "'; expected letters, digits, '.', '_', '-', ':'"};
      }
    }
    server.name = std::string(name);
    auto url = ParseAgentUrl(fields[1]);
    if (!url.ok()) return url.error().WithContext(where + "server '" + server.name + "': ");
    server.agent_url = std::move(*url);
    if (fields[2] == "high") {
      server.priority = polca::Priority::kHigh;
    } else if (fields[2] == "low") {
      server.priority = polca::Priority::kLow;
    } else if (training) {
      std::string_view job = fields[3];
      if (job.size() > kMaxJobIdChars) {
        return Error{where + "server '" + server.name + "': a job id of " + std::to_string(job.size()) +
                     " characters; expected at most " + std::to_string(kMaxJobIdChars)};
      }
      for (char c : job) {
        if (!IsJobIdChar(c)) {
          return Error{where + "server '" + server.name + "': job id '" + PrintableText(job, 100) + "' holds '" +
                       std::string(1, c) + "'; expected the planning server's job id (letters, digits, '.', '_', " +
                       "'-', '+', ':')"};
        }
      }
      server.priority = polca::Priority::kLow;  // its fallback class
      server.training_job_id = std::string(job);
    } else {
      return Error{where + "server '" + server.name + "': unknown priority '" + PrintableText(fields[2], 100) +
                   "'; expected 'high', 'low' or 'training JOB_ID'"};
    }
    if (auto seen = name_lines.find(server.name); seen != name_lines.end()) {
      return Error{where + "server name '" + server.name + "' is used twice (first on line " +
                   std::to_string(seen->second) + "); expected each name once"};
    }
    if (auto seen = url_lines.find(server.agent_url); seen != url_lines.end()) {
      return Error{where + "server '" + server.name + "': agent URL " + server.agent_url +
                   " is used twice (first on line " + std::to_string(seen->second) +
                   "); expected one line per agent (its power would be counted twice)"};
    }
    name_lines.emplace(server.name, line_number);
    url_lines.emplace(server.agent_url, line_number);
    if (servers.size() == static_cast<size_t>(polca::kMaxServersPerRow)) {
      return Error{where + "more than " + std::to_string(polca::kMaxServersPerRow) +
                   " servers: a row's bound (docs/limits.md); run one controller per row"};
    }
    servers.push_back(std::move(server));
  }
  if (servers.empty()) {
    return Error{path + ": the row has no server; expected one 'NAME AGENT_URL PRIORITY' (or 'NAME AGENT_URL " +
                 "training JOB_ID') line per server"};
  }
  return servers;
}

Result<std::vector<RowServer>> ReadRowFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::IOError("cannot read row file " + PrintableText(path, 256));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error::IOError("cannot read row file " + PrintableText(path, 256));
  return ParseRowFile(text.str(), path);
}

}  // namespace wattcut::row_control
