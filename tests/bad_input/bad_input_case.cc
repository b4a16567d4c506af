#include "tests/bad_input/bad_input_case.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace wattcut::testing {
namespace {

std::string Trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

Result<int> ParseCode(const std::string& where, const std::string& value) {
  try {
    size_t used = 0;
    const int code = std::stoi(value, &used);
    if (used == value.size()) return code;
  } catch (const std::exception&) {
  }
  return Error{where + ": expected a number, got '" + value + "'"};
}

}  // namespace

std::string Substitute(std::string text, const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [key, value] : values) {
    const std::string token = "{" + key + "}";
    for (size_t at = text.find(token); at != std::string::npos; at = text.find(token, at + value.size())) {
      text.replace(at, token.size(), value);
    }
  }
  return text;
}

Result<BadInputCase> ReadBadInputCase(const std::string& corpus_dir, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open"};
  BadInputCase c;
  c.path = path;
  c.name = std::filesystem::relative(path, corpus_dir).replace_extension("").string();
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number);
    line = Trim(line);
    if (line.empty() || line[0] == '#') continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) return Error{where + ": expected 'key: value'"};
    const std::string key = Trim(line.substr(0, colon)), value = Trim(line.substr(colon + 1));
    if (key == "args") {
      std::istringstream words(value);
      for (std::string w; words >> w;) c.args.push_back(w);
    } else if (key == "exit") {
      auto code = ParseCode(where, value);
      if (!code) return code.error();
      c.exit_code = *code;
    } else if (key == "message") {
      c.messages.push_back(value);
    } else if (key == "request") {
      const auto space = value.find(' ');
      if (space == std::string::npos) return Error{where + ": expected 'request: METHOD TARGET'"};
      c.method = value.substr(0, space);
      c.target = Trim(value.substr(space + 1));
    } else if (key == "content-type") {
      c.content_type = value;
    } else if (key == "body") {
      c.body = value;
    } else if (key == "body-file") {
      const std::string file = Substitute(value, {{"corpus", corpus_dir}});
      std::ifstream body(file, std::ios::binary);
      if (!body) return Error{where + ": cannot open body-file " + file};
      std::ostringstream s;
      s << body.rdbuf();
      c.body = s.str();
    } else if (key == "status") {
      auto code = ParseCode(where, value);
      if (!code) return code.error();
      c.status = *code;
    } else {
      return Error{where + ": unknown key '" + key +
                   "' (expected args, exit, message, request, content-type, body, body-file, status)"};
    }
  }
  if (c.args.empty() == c.method.empty()) {
    return Error{path + ": a case has either 'args' (a command line) or 'request' (an HTTP request)"};
  }
  return c;
}

std::vector<std::string> ListBadInputCases(const std::string& corpus_dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(corpus_dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".case") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

size_t FindControlByte(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return i;
  }
  return std::string::npos;
}

}  // namespace wattcut::testing
