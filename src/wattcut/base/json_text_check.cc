#include "wattcut/base/json_text_check.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_set>
#include <vector>

#include "wattcut/base/printable_text.h"

namespace wattcut {

namespace {

using json = nlohmann::json;

class Checker : public nlohmann::json_sax<json> {
 public:
  explicit Checker(const std::map<std::string, int64_t>& limits) : limits_(limits) {}

  bool null() override { return Element(); }
  bool boolean(bool) override { return Element(); }
  bool number_integer(number_integer_t) override { return Element(); }
  bool number_unsigned(number_unsigned_t) override { return Element(); }
  bool number_float(number_float_t, const string_t&) override { return Element(); }
  bool string(string_t&) override { return Element(); }
  bool binary(binary_t&) override { return Element(); }
  bool start_object(std::size_t) override {
    if (!Element() || !Deeper()) return false;
    frames_.push_back(Frame{false, -1, {}, {}, -1});
    return true;
  }
  bool key(string_t& name) override {
    Frame& top = frames_.back();
    top.key = name;
    if (!top.keys.insert(name).second) {
      JsonTextProblem p;
      p.kind = JsonTextProblem::Kind::kDuplicateKey;
      p.path = Path();
      p.key = name;
      problem_ = std::move(p);
      return false;
    }
    return true;
  }
  bool end_object() override {
    frames_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    if (!Element() || !Deeper()) return false;
    int64_t limit = -1;
    if (frames_.size() == 1 && !frames_.back().array) {
      auto it = limits_.find(frames_.back().key);
      if (it != limits_.end()) limit = it->second;
    }
    frames_.push_back(Frame{true, -1, {}, {}, limit});
    return true;
  }
  bool end_array() override {
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    JsonTextProblem p;
    p.kind = JsonTextProblem::Kind::kSyntax;
    p.byte = position > 0 ? position - 1 : 0;
    p.message = e.what();
    p.path = Path();
    problem_ = std::move(p);
    return false;
  }

  std::optional<JsonTextProblem>& problem() { return problem_; }

 private:
  struct Frame {
    bool array = false;
    int64_t index = -1;  // arrays: the current element
    std::string key;     // objects: the current key
    std::unordered_set<std::string> keys;
    int64_t limit = -1;  // arrays: the most elements allowed (-1: any)
  };
  // A value starts (in an array: its next element).
  bool Element() {
    if (frames_.empty() || !frames_.back().array) return true;
    Frame& top = frames_.back();
    ++top.index;
    if (top.limit >= 0 && top.index >= top.limit) {
      JsonTextProblem p;
      p.kind = JsonTextProblem::Kind::kTooManyElements;
      p.path = frames_.size() >= 2 ? frames_[frames_.size() - 2].key : "";
      p.limit = top.limit;
      problem_ = std::move(p);
      return false;
    }
    return true;
  }
  // An array or object starts inside the frames open now.
  bool Deeper() {
    if (frames_.size() < static_cast<size_t>(kJsonMaxDepth)) return true;
    JsonTextProblem p;
    p.kind = JsonTextProblem::Kind::kTooDeep;
    p.path = Path();
    p.limit = kJsonMaxDepth;
    problem_ = std::move(p);
    return false;
  }
  std::string Path() const {
    std::string path;
    for (const Frame& frame : frames_) {
      if (frame.array) {
        path += "[" + std::to_string(frame.index) + "]";
      } else {
        path += (path.empty() ? "" : ".") + frame.key;
      }
    }
    return path;
  }

  const std::map<std::string, int64_t>& limits_;
  std::vector<Frame> frames_;
  std::optional<JsonTextProblem> problem_;
};

}  // namespace

std::optional<JsonTextProblem> FindJsonTextProblem(std::string_view text,
                                                   const std::map<std::string, int64_t>& element_limits) {
  Checker checker(element_limits);
  try {
    json::sax_parse(text.begin(), text.end(), &checker);
  } catch (const json::exception& e) {
    JsonTextProblem p;
    p.message = e.what();
    p.byte = text.size();
    return p;
  }
  return checker.problem();
}

std::string JsonDepthMessage(const JsonTextProblem& problem) {
  return "arrays and objects nested deeper than " + std::to_string(problem.limit) + " levels" +
         (problem.path.empty() ? std::string() : " (at " + PrintableText(problem.path, 80) + ")");
}

std::string LineAndColumn(std::string_view text, size_t byte) {
  byte = std::min(byte, text.size());
  const size_t line =
      1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(byte), '\n'));
  const size_t line_start = byte == 0 ? std::string_view::npos : text.rfind('\n', byte - 1);
  const size_t column = byte - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

}  // namespace wattcut
