#include "wattcut/agent/zeusd_query.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>
#include <string_view>

#include "wattcut/agent/agent_answer.h"

namespace wattcut::agent {

using ojson = nlohmann::ordered_json;

bool CheckQuery(const httplib::Request& req, httplib::Response& res, const std::vector<std::string>& allowed,
                const std::vector<std::string>& required) {
  auto refuse = [&res](const std::string& detail) {
    AnswerZeusdText(res, 400, "Query deserialize error: " + detail);
    return false;
  };
  std::set<std::string> seen;
  for (const auto& [name, value] : req.params) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string expected;
      for (const std::string& a : allowed) expected += (expected.empty() ? "`" : ", `") + a + "`";
      return refuse("unknown field `" + name + "`, expected " +
                    (allowed.empty() ? std::string("nothing") : (allowed.size() == 1 ? "" : "one of ") + expected));
    }
    if (!seen.insert(name).second) return refuse("duplicate field `" + name + "`");
  }
  for (const std::string& r : required) {
    if (!seen.count(r)) return refuse("missing field `" + r + "`");
  }
  return true;
}

std::optional<bool> BoolParam(const httplib::Request& req, httplib::Response& res, const std::string& name) {
  const std::string value = req.get_param_value(name);
  if (value == "true") return true;
  if (value == "false") return false;
  AnswerZeusdText(res, 400, "Query deserialize error: provided string was not `true` or `false`");
  return std::nullopt;
}

std::optional<std::vector<int>> DeviceIds(const httplib::Request& req, httplib::Response& res, const char* param,
                                          const std::string& lower, const std::vector<int>& known, bool write) {
  if (!req.has_param(param)) return known;  // a setter's list is required (CheckQuery saw to it)
  const std::string text = req.get_param_value(param);
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  if (trim(text).empty()) {
    AnswerZeusdError(res, 400, std::string(param) + " must contain at least one " + lower + " index");
    return std::nullopt;
  }
  std::set<int> ids;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    std::string_view piece = trim(std::string_view(text).substr(begin, end - begin));
    if (piece.empty()) {
      AnswerZeusdError(res, 400, std::string(param) + " contains an empty " + lower + " index");
      return std::nullopt;
    }
    std::string_view digits = piece.front() == '+' ? piece.substr(1) : piece;
    unsigned long value = 0;
    auto [at, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || at != digits.data() + digits.size() || value > 1'000'000) {
      AnswerZeusdError(res, 400, "Invalid " + lower + " index: " + std::string(piece.substr(0, 40)));
      return std::nullopt;
    }
    ids.insert(static_cast<int>(value));
    begin = end + 1;
  }
  for (int id : ids) {
    if (std::find(known.begin(), known.end(), id) == known.end()) {
      // zeusd's writes say it in text, its reads in JSON.
      if (write) {
        AnswerZeusdText(res, 400, lower + " index " + std::to_string(id) + " does not exist.");
      } else {
        AnswerZeusdError(res, 400, lower + " " + std::to_string(id) + " not found");
      }
      return std::nullopt;
    }
  }
  return std::vector<int>(ids.begin(), ids.end());
}

std::optional<int64_t> U32Param(const httplib::Request& req, httplib::Response& res, const std::string& name) {
  const std::string text = req.get_param_value(name);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string detail;
  if (text.empty()) {
    detail = "cannot parse integer from empty string";
  } else if (ec == std::errc::result_out_of_range || (ec == std::errc() && value > 4294967295LL)) {
    detail = "number too large to fit in target type";
  } else if (ec != std::errc() || end != text.data() + text.size() || value < 0 || text.front() == '-') {
    detail = "invalid digit found in string";
  }
  if (!detail.empty()) {
    AnswerZeusdText(res, 400, "Query deserialize error: " + detail);
    return std::nullopt;
  }
  return value;
}

std::optional<std::vector<int>> StreamIds(const httplib::Request& req, httplib::Response& res, const char* param,
                                          const std::string& kind, const std::vector<int>& known) {
  if (!req.has_param(param)) return known;
  std::set<int> asked, unknown;
  const std::string text = req.get_param_value(param);
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    std::string piece = text.substr(begin, end - begin);
    piece.erase(0, piece.find_first_not_of(" \t"));
    piece.erase(piece.find_last_not_of(" \t") + 1);
    int id = -1;
    auto [at, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), id);
    if (piece.empty() || ec != std::errc() || at != piece.data() + piece.size() || id < 0) {
      AnswerZeusdError(res, 400, "Invalid " + kind + " index: " + piece.substr(0, 40));
      return std::nullopt;
    }
    (std::find(known.begin(), known.end(), id) == known.end() ? unknown : asked).insert(id);
    begin = end + 1;
  }
  if (!unknown.empty()) {
    auto list = [](auto ids) {
      std::string out;
      for (int id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
      return "[" + out + "]";
    };
    AnswerZeusdError(res, 400, "Unknown " + kind + " indices: " + list(unknown) + ". Available: " + list(known));
    return std::nullopt;
  }
  return std::vector<int>(asked.begin(), asked.end());
}

int ZeusdStatusFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kMalformed:
    case ErrorCode::kNotFound:
      return 400;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kConflict:
      return 409;
    default:
      return 500;
  }
}

void DeviceErrors::Add(int id, int s, const std::string& message) {
  status = std::max(status, s);
  errors[std::to_string(id)] = message;
}

bool DeviceErrors::Answered(httplib::Response& res) const {
  if (status == 0) return false;
  AnswerZeusd(res, status, ojson{{"errors", errors}});
  return true;
}

}  // namespace wattcut::agent
