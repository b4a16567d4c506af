// The text both frontier files are written in (plan/frontier_file.h, wattcut.frontier/v1 and
// v2; plan/dag_frontier_file.h, wattcut.dag_frontier/v1): space-separated tokens on numbered
// lines, numbers that read back exactly, and the part both formats share, written and read
// once here: the points of a DurationFrontier,
//
//   start D D ...                       every computation's duration at the first point
//   points N
//   p DURATION_UNITS TIME_S ENERGY_J EFFECTIVE_ENERGY_J [COMPUTATION:DURATION_UNITS ...]   N lines
//   peak_1s_power_w W W ...             optional: one per point
//   end
//
// and the reading of a frontier file from a `wattcut frontier --out` folder or the file itself.
// Errors name the file and line ("FILE:LINE: field: expected ..., got '...'").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/plan/duration_frontier.h"

namespace wattcut::frontier_text {

void AppendInt(std::string& out, int64_t value);
// A double as text that reads back as the same double (base/general_text.h).
void AppendNumber(std::string& out, double value);

// The file's lines, one at a time, with their numbers, split into space-separated tokens.
class LineReader {
 public:
  LineReader(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  // The next line's tokens; false at the end of the text.
  bool Next();
  // The next line, which must exist and start with `keyword`.
  Status Expect(std::string_view keyword);

  size_t size() const { return tokens_.size(); }
  std::string_view Token(size_t i) const { return i < tokens_.size() ? tokens_[i] : std::string_view(); }
  Error Fail(const std::string& what) const;

  // Token i as an integer in [min, max].
  Result<int64_t> Integer(size_t i, const char* field, int64_t min, int64_t max) const;
  // Token i as a finite number >= 0.
  Result<double> Number(size_t i, const char* field) const;
  // "A:B" as two integers in their ranges, A in [0, max_a] and B in [min_b, max_b].
  Result<std::pair<int64_t, int64_t>> Pair(size_t i, const char* field, int64_t max_a, int64_t max_b,
                                           int64_t min_b = 0) const;

 private:
  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
  int line_number_ = 0;
  std::vector<std::string_view> tokens_;
};

// The points part above, from the "start" line to "end".
void AppendPoints(std::string& out, const DurationFrontier& frontier);
// Reads the "start" line of a frontier of `num_computations` computations.
Result<std::vector<int64_t>> ReadStart(LineReader& in, int64_t num_computations);
// Reads the "points" line through "end" into `frontier` (holding the start durations), and
// refuses text after "end".
Status ReadPoints(LineReader& in, DurationFrontier& frontier);

// A frontier file's text: `path` is a `wattcut frontier --out` folder (its frontier.wattcut) or
// the file itself. Errors name the path: missing, not readable, larger than the bound.
struct FrontierText {
  std::string file;  // the file read
  std::string text;
};
inline constexpr std::string_view kFileName = "frontier.wattcut";
inline constexpr uint64_t kMaxFileBytes = uint64_t{1} << 30;
Result<FrontierText> ReadText(const std::string& path);
// The text's first line (its format), without the newline.
std::string_view FormatLine(std::string_view text);
// Only the format line of the file at `path` (at most kMaxFormatLineBytes of it).
inline constexpr size_t kMaxFormatLineBytes = 64;
Result<FrontierText> ReadFormatLine(const std::string& path);

}  // namespace wattcut::frontier_text

// `lhs = *expr`, or return expr's error (the frontier files' readers).
#define WATTCUT_TEXT_CONCAT_INNER(a, b) a##b
#define WATTCUT_TEXT_CONCAT(a, b) WATTCUT_TEXT_CONCAT_INNER(a, b)
#define WATTCUT_TEXT_ASSIGN(lhs, expr)                                                            \
  auto WATTCUT_TEXT_CONCAT(read_, __LINE__) = (expr);                                             \
  if (!WATTCUT_TEXT_CONCAT(read_, __LINE__)) return WATTCUT_TEXT_CONCAT(read_, __LINE__).error(); \
  lhs = *WATTCUT_TEXT_CONCAT(read_, __LINE__)
