#include "wattcut/plan/frontier_text.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "wattcut/base/general_text.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/plan/planning_limits.h"

namespace wattcut::frontier_text {

void AppendInt(std::string& out, int64_t value) {
  char buffer[24];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, result.ptr);
}

void AppendNumber(std::string& out, double value) { out += GeneralText(value); }

bool LineReader::Next() {
  if (pos_ >= text_.size()) return false;
  size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  std::string_view line = text_.substr(pos_, end - pos_);
  pos_ = end + 1;
  ++line_number_;
  tokens_.clear();
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) tokens_.push_back(line.substr(start, i - start));
  }
  return true;
}

Status LineReader::Expect(std::string_view keyword) {
  if (!Next()) return Fail("the file ends early; expected a '" + std::string(keyword) + "' line");
  if (tokens_.empty() || tokens_[0] != keyword) {
    return Fail("expected a '" + std::string(keyword) + "' line, got '" + PrintableText(Token(0), 40) + "'");
  }
  return Status::Ok();
}

Error LineReader::Fail(const std::string& what) const {
  return Error::Corruption(source_ + ":" + std::to_string(line_number_) + ": " + what);
}

Result<int64_t> LineReader::Integer(size_t i, const char* field, int64_t min, int64_t max) const {
  std::string_view t = Token(i);
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || value < min || value > max) {
    return Fail(std::string(field) + ": expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                "], got '" + PrintableText(t, 40) + "'");
  }
  return value;
}

Result<double> LineReader::Number(size_t i, const char* field) const {
  std::string_view t = Token(i);
  double value = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(value) || value < 0) {
    return Fail(std::string(field) + ": expected a finite number >= 0, got '" + PrintableText(t, 40) + "'");
  }
  return value;
}

Result<std::pair<int64_t, int64_t>> LineReader::Pair(size_t i, const char* field, int64_t max_a, int64_t max_b,
                                                     int64_t min_b) const {
  std::string_view t = Token(i);
  size_t colon = t.find(':');
  int64_t a = 0;
  int64_t b = 0;
  bool ok = colon != std::string_view::npos;
  if (ok) {
    auto ra = std::from_chars(t.data(), t.data() + colon, a);
    auto rb = std::from_chars(t.data() + colon + 1, t.data() + t.size(), b);
    ok = colon > 0 && ra.ec == std::errc() && ra.ptr == t.data() + colon && rb.ec == std::errc() &&
         rb.ptr == t.data() + t.size() && a >= 0 && a <= max_a && b >= min_b && b <= max_b;
  }
  if (!ok) {
    return Fail(std::string(field) + ": expected A:B with A in [0, " + std::to_string(max_a) + "] and B in [0, " +
                std::to_string(max_b) + "], got '" + PrintableText(t, 40) + "'");
  }
  return std::pair{a, b};
}

void AppendPoints(std::string& out, const DurationFrontier& frontier) {
  out += "start";
  for (int64_t d : frontier.start_durations()) {
    out += ' ';
    AppendInt(out, d);
  }
  out += "\npoints ";
  AppendInt(out, static_cast<int64_t>(frontier.points().size()));
  out += '\n';
  for (size_t i = 0; i < frontier.points().size(); ++i) {
    const FrontierPoint& p = frontier.points()[i];
    out += "p ";
    AppendInt(out, p.duration_units);
    out += ' ';
    AppendNumber(out, p.time_s);
    out += ' ';
    AppendNumber(out, p.energy_j);
    out += ' ';
    AppendNumber(out, p.effective_energy_j);
    for (const DurationChange& c : frontier.ChangesAt(i)) {
      out += ' ';
      AppendInt(out, c.computation);
      out += ':';
      AppendInt(out, c.duration_units);
    }
    out += '\n';
  }
  // The peak 1-s power of every point, when every point has it (an optional line).
  bool every_peak = !frontier.points().empty();
  for (const FrontierPoint& p : frontier.points()) every_peak = every_peak && p.peak_1s_power_w.has_value();
  if (every_peak) {
    out += "peak_1s_power_w";
    for (const FrontierPoint& p : frontier.points()) {
      out += ' ';
      AppendNumber(out, *p.peak_1s_power_w);
    }
    out += '\n';
  }
  out += "end\n";
}

Result<std::vector<int64_t>> ReadStart(LineReader& in, int64_t num_computations) {
  if (auto st = in.Expect("start"); !st) return st.error();
  if (static_cast<int64_t>(in.size()) - 1 != num_computations) {
    return in.Fail("start: expected " + std::to_string(num_computations) + " durations (one per computation), got " +
                   std::to_string(in.size() - 1));
  }
  std::vector<int64_t> start(static_cast<size_t>(num_computations));
  for (size_t i = 0; i < start.size(); ++i) {
    WATTCUT_TEXT_ASSIGN(start[i], in.Integer(i + 1, "start duration", 0, kMaxDurationUnits));
  }
  return start;
}

Status ReadPoints(LineReader& in, DurationFrontier& frontier) {
  const int64_t num_computations = frontier.num_computations();
  if (auto st = in.Expect("points"); !st) return st.error();
  int64_t num_points = 0;
  WATTCUT_TEXT_ASSIGN(num_points, in.Integer(1, "points", 1, kMaxFrontierPoints));
  for (int64_t i = 0; i < num_points; ++i) {
    if (auto st = in.Expect("p"); !st) return st.error();
    if (in.size() < 5) return in.Fail("p: expected DURATION_UNITS TIME_S ENERGY_J EFFECTIVE_ENERGY_J [CHANGES]");
    FrontierPoint point;
    WATTCUT_TEXT_ASSIGN(point.duration_units, in.Integer(1, "duration_units", 0, kMaxIterationUnits));
    WATTCUT_TEXT_ASSIGN(point.time_s, in.Number(2, "time_s"));
    WATTCUT_TEXT_ASSIGN(point.energy_j, in.Number(3, "energy_j"));
    WATTCUT_TEXT_ASSIGN(point.effective_energy_j, in.Number(4, "effective_energy_j"));
    if (i == 0 && in.size() > 5) return in.Fail("the first point is the start durations: it lists no changes");
    // Points run slowest first: each one's iteration is shorter than the one before.
    if (i > 0 && !frontier.points().empty() &&
        !(point.duration_units < frontier.points().back().duration_units &&
          point.time_s <= frontier.points().back().time_s)) {
      return in.Fail("p: points run slowest first: expected duration_units below " +
                     std::to_string(frontier.points().back().duration_units) + " and time_s at most " +
                     GeneralText(frontier.points().back().time_s) + ", got " + std::to_string(point.duration_units) +
                     " and " + GeneralText(point.time_s));
    }
    std::vector<DurationChange> changes;
    changes.reserve(in.size() - 5);
    for (size_t t = 5; t < in.size(); ++t) {
      std::pair<int64_t, int64_t> change;
      WATTCUT_TEXT_ASSIGN(change,
                          in.Pair(t, "change COMPUTATION:DURATION_UNITS", num_computations - 1, kMaxDurationUnits));
      changes.push_back(DurationChange{static_cast<int32_t>(change.first), change.second});
    }
    frontier.AddPoint(point, std::move(changes));
  }
  if (!in.Next()) return in.Fail("the file ends early; expected a 'end' line");
  if (in.Token(0) == "peak_1s_power_w") {
    if (static_cast<int64_t>(in.size()) - 1 != num_points) {
      return in.Fail("peak_1s_power_w: expected " + std::to_string(num_points) + " powers (one per point), got " +
                     std::to_string(in.size() - 1));
    }
    for (int64_t i = 0; i < num_points; ++i) {
      double watts = 0;
      WATTCUT_TEXT_ASSIGN(watts, in.Number(static_cast<size_t>(i) + 1, "peak_1s_power_w"));
      frontier.SetPeakPower(static_cast<size_t>(i), watts);
    }
    if (!in.Next()) return in.Fail("the file ends early; expected a 'end' line");
  }
  if (in.Token(0) != "end") return in.Fail("expected a 'end' line, got '" + PrintableText(in.Token(0), 40) + "'");
  if (in.size() != 1) return in.Fail("end: expected nothing after 'end', got '" + PrintableText(in.Token(1), 40) + "'");
  if (in.Next()) return in.Fail("text after the 'end' line");
  return Status::Ok();
}

namespace {

// The file `path` names: itself, or a folder's frontier.wattcut.
Result<std::string> ResolveFile(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status given = fs::status(path, ec);
  if (!fs::exists(given)) return Error::NotFound(path + ": no such file or directory");
  std::string file = path;
  if (fs::is_directory(given)) {
    file = (fs::path(path) / kFileName).string();
    if (!fs::exists(file, ec)) {
      return Error::NotFound(path + ": no " + std::string(kFileName) +
                             " in this folder (is it a `wattcut frontier --out` folder? older versions wrote no "
                             "frontier.wattcut: run wattcut frontier again)");
    }
  }
  if (fs::is_directory(file, ec)) return Error{file + ": is a directory, expected a frontier file"};
  // A FIFO or a device would block the read (or never end it): only a regular file is read.
  if (!fs::is_regular_file(file, ec)) return Error{file + ": is not a regular file, expected a frontier file"};
  return file;
}

}  // namespace

Result<FrontierText> ReadText(const std::string& path) {
  namespace fs = std::filesystem;
  Result<std::string> resolved = ResolveFile(path);
  if (!resolved.ok()) return resolved.error();
  const std::string& file = *resolved;
  std::error_code ec;
  const uintmax_t size = fs::file_size(file, ec);
  if (ec) return Error::IOError(file + ": cannot read its size: " + ec.message());
  if (size > kMaxFileBytes) {
    return Error{file + ": file is " + std::to_string(size) + " bytes, more than the " + std::to_string(kMaxFileBytes) +
                 " a frontier file may have"};
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error::IOError(file + ": cannot open file for reading");
  FrontierText result{file, std::string(static_cast<size_t>(size), '\0')};
  in.read(result.text.data(), static_cast<std::streamsize>(size));
  if (static_cast<uintmax_t>(in.gcount()) != size) return Error::IOError(file + ": read error");
  return result;
}

std::string_view FormatLine(std::string_view text) { return text.substr(0, text.find('\n')); }

Result<FrontierText> ReadFormatLine(const std::string& path) {
  Result<std::string> file = ResolveFile(path);
  if (!file.ok()) return file.error();
  std::ifstream in(*file, std::ios::binary);
  if (!in) return Error::IOError(*file + ": cannot open file for reading");
  FrontierText result{*file, std::string(kMaxFormatLineBytes, '\0')};
  in.read(result.text.data(), static_cast<std::streamsize>(result.text.size()));
  result.text.resize(static_cast<size_t>(in.gcount()));
  result.text.resize(FormatLine(result.text).size());
  return result;
}

}  // namespace wattcut::frontier_text
