#include "wattcut/plan/frontier_file.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "wattcut/base/general_text.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/plan/planning_limits.h"
#include "wattcut/profile/operation_options.h"

namespace wattcut {
namespace {

void AppendInt(std::string& out, int64_t value) {
  char buffer[24];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, result.ptr);
}

void AppendNumber(std::string& out, double value) { out += GeneralText(value); }

// v2 (wattcut.frontier/v2) is written only for what v1 cannot say: chunks (the interleaved
// schedule) or the split backward kinds (zero-bubble schedules); everything else stays v1,
// which older readers read.
bool NeedsVersion2(const Frontier::Setup& setup) {
  if (ScheduleChunks(setup.schedule) > 1) return true;
  for (const auto& list : setup.schedule) {
    for (const Computation& c : list) {
      if (c.kind != InstructionKind::kForward && c.kind != InstructionKind::kBackward) return true;
    }
  }
  return false;
}

// "options STAGE INSTRUCTION DURATION:FREQ ..."
void AppendOptionsLine(std::string& out, const Frontier::Setup& setup, size_t stage, int kind) {
  out += "options ";
  AppendInt(out, static_cast<int64_t>(stage));
  out += ' ';
  out += InstructionName(static_cast<InstructionKind>(kind));
  const auto& options = stage < setup.options.size() && static_cast<size_t>(kind) < setup.options[stage].size()
                            ? setup.options[stage][static_cast<size_t>(kind)]
                            : std::vector<std::pair<int64_t, int>>{};
  for (const auto& [duration, freq] : options) {
    out += ' ';
    AppendInt(out, duration);
    out += ':';
    AppendInt(out, freq);
  }
  out += '\n';
}

// The file's lines, one at a time, with their numbers, split into space-separated tokens.
class LineReader {
 public:
  LineReader(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  // The next line's tokens; false at the end of the text.
  bool Next() {
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
  // The next line, which must exist and start with `keyword`.
  Status Expect(std::string_view keyword) {
    if (!Next()) return Fail("the file ends early; expected a '" + std::string(keyword) + "' line");
    if (tokens_.empty() || tokens_[0] != keyword) {
      return Fail("expected a '" + std::string(keyword) + "' line, got '" + PrintableText(Token(0), 40) + "'");
    }
    return Status::Ok();
  }

  size_t size() const { return tokens_.size(); }
  std::string_view Token(size_t i) const { return i < tokens_.size() ? tokens_[i] : std::string_view(); }
  Error Fail(const std::string& what) const {
    return Error::Corruption(source_ + ":" + std::to_string(line_number_) + ": " + what);
  }

  Result<int64_t> Integer(size_t i, const char* field, int64_t min, int64_t max) const {
    std::string_view t = Token(i);
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
    if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || value < min || value > max) {
      return Fail(std::string(field) + ": expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                  "], got '" + PrintableText(t, 40) + "'");
    }
    return value;
  }
  Result<double> Number(size_t i, const char* field) const {
    std::string_view t = Token(i);
    double value = 0;
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
    if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(value) || value < 0) {
      return Fail(std::string(field) + ": expected a finite number >= 0, got '" + PrintableText(t, 40) + "'");
    }
    return value;
  }
  // "A:B" as two integers in their ranges.
  Result<std::pair<int64_t, int64_t>> Pair(size_t i, const char* field, int64_t max_a, int64_t max_b) const {
    std::string_view t = Token(i);
    size_t colon = t.find(':');
    int64_t a = 0;
    int64_t b = 0;
    bool ok = colon != std::string_view::npos;
    if (ok) {
      auto ra = std::from_chars(t.data(), t.data() + colon, a);
      auto rb = std::from_chars(t.data() + colon + 1, t.data() + t.size(), b);
      ok = colon > 0 && ra.ec == std::errc() && ra.ptr == t.data() + colon && rb.ec == std::errc() &&
           rb.ptr == t.data() + t.size() && a >= 0 && a <= max_a && b >= 0 && b <= max_b;
    }
    if (!ok) {
      return Fail(std::string(field) + ": expected A:B with A in [0, " + std::to_string(max_a) + "] and B in [0, " +
                  std::to_string(max_b) + "], got '" + PrintableText(t, 40) + "'");
    }
    return std::pair{a, b};
  }

 private:
  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
  int line_number_ = 0;
  std::vector<std::string_view> tokens_;
};

// `lhs = *expr`, or return expr's error.
#define WATTCUT_CONCAT_INNER(a, b) a##b
#define WATTCUT_CONCAT(a, b) WATTCUT_CONCAT_INNER(a, b)
#define WATTCUT_ASSIGN(lhs, expr)                                                       \
  auto WATTCUT_CONCAT(read_, __LINE__) = (expr);                                        \
  if (!WATTCUT_CONCAT(read_, __LINE__)) return WATTCUT_CONCAT(read_, __LINE__).error(); \
  lhs = *WATTCUT_CONCAT(read_, __LINE__)

}  // namespace

std::string FrontierFileText(const Frontier& frontier) {
  const Frontier::Setup& setup = frontier.setup();
  std::string out;
  out.reserve(64 * frontier.points().size() + 16 * static_cast<size_t>(frontier.num_computations()));
  const bool v2 = NeedsVersion2(setup);
  out += v2 ? kFrontierFormatV2 : kFrontierFormat;
  out += "\nunit_time_s ";
  AppendNumber(out, setup.unit_time_s);
  out += "\np2p_power_w ";
  AppendNumber(out, setup.p2p_power_w);
  out += "\nstages ";
  AppendInt(out, static_cast<int64_t>(setup.schedule.size()));
  out += '\n';
  const int chunks = ScheduleChunks(setup.schedule);
  if (v2) {
    out += "chunks ";
    AppendInt(out, chunks);
    out += '\n';
  }
  for (size_t s = 0; s < setup.schedule.size(); ++s) {
    out += "schedule ";
    AppendInt(out, static_cast<int64_t>(s));
    for (const Computation& c : setup.schedule[s]) {
      out += ' ';
      out += InstructionName(c.kind);
      out += ':';
      AppendInt(out, c.microbatch);
      if (v2) {
        out += ':';
        AppendInt(out, c.chunk);
      }
    }
    out += '\n';
    // v1: the stage's forward and backward options after its schedule.
    if (!v2) {
      for (int k = 0; k < 2; ++k) AppendOptionsLine(out, setup, s, k);
    }
  }
  // v2: after the schedules, every profile stage's options of every instruction.
  if (v2) {
    for (size_t stage = 0; stage < setup.schedule.size() * static_cast<size_t>(chunks); ++stage) {
      for (int k = 0; k < kNumInstructionKinds; ++k) AppendOptionsLine(out, setup, stage, k);
    }
  }
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
  return out;
}

Result<Frontier> ParseFrontierFile(std::string_view text, const std::string& source) {
  LineReader in(text, source);
  if (!in.Next() || in.size() != 1 || (in.Token(0) != kFrontierFormat && in.Token(0) != kFrontierFormatV2)) {
    return in.Fail("expected the format line '" + std::string(kFrontierFormat) + "' or '" +
                   std::string(kFrontierFormatV2) + "', got '" + PrintableText(in.Token(0), 40) + "'");
  }
  const bool v2 = in.Token(0) == kFrontierFormatV2;
  Frontier::Setup setup;
  if (auto s = in.Expect("unit_time_s"); !s) return s.error();
  WATTCUT_ASSIGN(setup.unit_time_s, in.Number(1, "unit_time_s"));
  if (!(setup.unit_time_s > 0)) return in.Fail("unit_time_s: expected a number > 0");
  if (auto s = in.Expect("p2p_power_w"); !s) return s.error();
  WATTCUT_ASSIGN(setup.p2p_power_w, in.Number(1, "p2p_power_w"));
  if (auto s = in.Expect("stages"); !s) return s.error();
  int64_t num_stages = 0;
  WATTCUT_ASSIGN(num_stages, in.Integer(1, "stages", 1, kMaxStages));
  int64_t chunks = 1;
  if (v2) {
    if (auto s = in.Expect("chunks"); !s) return s.error();
    WATTCUT_ASSIGN(chunks, in.Integer(1, "chunks", 1, kMaxStages / num_stages));
  }
  const int64_t num_pieces = num_stages * chunks;  // profile stages
  int64_t num_computations = 0;
  setup.schedule.resize(static_cast<size_t>(num_stages));
  // v1: forward and backward options per stage; v2: every kind's.
  setup.options.assign(static_cast<size_t>(num_pieces),
                       std::vector<std::vector<std::pair<int64_t, int>>>(v2 ? kNumInstructionKinds : 2));
  // "schedule S INSTRUCTION:MICROBATCH[:CHUNK] ..." (the chunk in v2 only).
  auto read_schedule = [&](int64_t s) -> Status {
    if (auto st = in.Expect("schedule"); !st) return st.error();
    int64_t stage = 0;
    WATTCUT_ASSIGN(stage, in.Integer(1, "schedule stage", s, s));
    if (num_computations + static_cast<int64_t>(in.size()) - 2 > kMaxComputations) {
      return in.Fail("more than " + std::to_string(kMaxComputations) + " computations");
    }
    auto& order = setup.schedule[static_cast<size_t>(stage)];
    const char* expected =
        v2 ? "INSTRUCTION:MICROBATCH:CHUNK such as forward:0:0" : "INSTRUCTION:MICROBATCH such as forward:0";
    for (size_t i = 2; i < in.size(); ++i) {
      std::string_view t = in.Token(i);
      size_t colon = t.find(':');
      auto kind = ParseInstruction(t.substr(0, colon));
      if (colon == std::string_view::npos || !kind ||
          (!v2 && *kind != InstructionKind::kForward && *kind != InstructionKind::kBackward)) {
        return in.Fail("schedule: expected " + std::string(expected) + ", got '" + PrintableText(t, 40) + "'");
      }
      const size_t chunk_colon = v2 ? t.find(':', colon + 1) : std::string_view::npos;
      if (v2 && chunk_colon == std::string_view::npos) {
        return in.Fail("schedule: expected " + std::string(expected) + ", got '" + PrintableText(t, 40) + "'");
      }
      const char* microbatch_end = v2 ? t.data() + chunk_colon : t.data() + t.size();
      int microbatch = 0;
      auto [ptr, ec] = std::from_chars(t.data() + colon + 1, microbatch_end, microbatch);
      if (ec != std::errc() || ptr != microbatch_end || microbatch < 0 || microbatch >= kMaxMicrobatches) {
        return in.Fail("schedule: expected a microbatch in [0, " + std::to_string(kMaxMicrobatches) + "), got '" +
                       PrintableText(t, 40) + "'");
      }
      int chunk = 0;
      if (v2) {
        auto [chunk_ptr, chunk_ec] = std::from_chars(t.data() + chunk_colon + 1, t.data() + t.size(), chunk);
        if (chunk_ec != std::errc() || chunk_ptr != t.data() + t.size() || chunk < 0 || chunk >= chunks) {
          return in.Fail("schedule: expected a chunk in [0, " + std::to_string(chunks) + "), got '" +
                         PrintableText(t, 40) + "'");
        }
      }
      order.push_back(Computation{*kind, microbatch, chunk});
    }
    num_computations += static_cast<int64_t>(order.size());
    return Status::Ok();
  };
  // "options STAGE INSTRUCTION DURATION_UNITS:FREQ_MHZ ..." of profile stage `piece`.
  auto read_options = [&](int64_t piece, int k) -> Status {
    const auto kind = static_cast<InstructionKind>(k);
    if (auto st = in.Expect("options"); !st) return st.error();
    if (auto stage_number = in.Integer(1, "options stage", piece, piece); !stage_number) return stage_number.error();
    if (in.Token(2) != InstructionName(kind)) {
      return in.Fail("options: expected instruction '" + std::string(InstructionName(kind)) + "', got '" +
                     PrintableText(in.Token(2), 40) + "'");
    }
    auto& options = setup.options[static_cast<size_t>(piece)][static_cast<size_t>(k)];
    for (size_t i = 3; i < in.size(); ++i) {
      std::pair<int64_t, int64_t> option;
      WATTCUT_ASSIGN(option, in.Pair(i, "options DURATION_UNITS:FREQ_MHZ", kMaxDurationUnits, 100000));
      if (!options.empty() && option.first < options.back().first) {
        return in.Fail("options: durations must not decrease, got " + std::to_string(option.first) + " after " +
                       std::to_string(options.back().first));
      }
      options.emplace_back(option.first, static_cast<int>(option.second));
    }
    // The piece runs on device piece % stages as its chunk piece / stages.
    const int device = static_cast<int>(piece % num_stages), chunk = static_cast<int>(piece / num_stages);
    bool used = false;
    for (const Computation& c : setup.schedule[static_cast<size_t>(device)]) {
      used = used || (c.kind == kind && c.chunk == chunk);
    }
    if (used && options.empty()) {
      return in.Fail("options: stage " + std::to_string(piece) + " runs " + std::string(InstructionName(kind)) +
                     " computations but lists no frequency for them");
    }
    return Status::Ok();
  };
  if (!v2) {
    // v1: each stage's schedule, then its forward and backward options.
    for (int64_t s = 0; s < num_stages; ++s) {
      if (Status st = read_schedule(s); !st.ok()) return st.error();
      for (int k = 0; k < 2; ++k) {
        if (Status st = read_options(s, k); !st.ok()) return st.error();
      }
    }
  } else {
    // v2: every device's schedule, then every profile stage's options of every instruction.
    for (int64_t s = 0; s < num_stages; ++s) {
      if (Status st = read_schedule(s); !st.ok()) return st.error();
    }
    for (int64_t piece = 0; piece < num_pieces; ++piece) {
      for (int k = 0; k < kNumInstructionKinds; ++k) {
        if (Status st = read_options(piece, k); !st.ok()) return st.error();
      }
    }
  }
  if (auto st = in.Expect("start"); !st) return st.error();
  if (static_cast<int64_t>(in.size()) - 1 != num_computations) {
    return in.Fail("start: expected " + std::to_string(num_computations) + " durations (one per computation), got " +
                   std::to_string(in.size() - 1));
  }
  std::vector<int64_t> start(static_cast<size_t>(num_computations));
  for (size_t i = 0; i < start.size(); ++i) {
    WATTCUT_ASSIGN(start[i], in.Integer(i + 1, "start duration", 0, kMaxDurationUnits));
  }
  if (auto st = in.Expect("points"); !st) return st.error();
  int64_t num_points = 0;
  WATTCUT_ASSIGN(num_points, in.Integer(1, "points", 1, kMaxFrontierPoints));
  Frontier frontier(std::move(setup), std::move(start));
  for (int64_t i = 0; i < num_points; ++i) {
    if (auto st = in.Expect("p"); !st) return st.error();
    if (in.size() < 5) return in.Fail("p: expected DURATION_UNITS TIME_S ENERGY_J EFFECTIVE_ENERGY_J [CHANGES]");
    FrontierPoint point;
    WATTCUT_ASSIGN(point.duration_units, in.Integer(1, "duration_units", 0, kMaxIterationUnits));
    WATTCUT_ASSIGN(point.time_s, in.Number(2, "time_s"));
    WATTCUT_ASSIGN(point.energy_j, in.Number(3, "energy_j"));
    WATTCUT_ASSIGN(point.effective_energy_j, in.Number(4, "effective_energy_j"));
    if (i == 0 && in.size() > 5) return in.Fail("the first point is the start durations: it lists no changes");
    std::vector<DurationChange> changes;
    changes.reserve(in.size() - 5);
    for (size_t t = 5; t < in.size(); ++t) {
      std::pair<int64_t, int64_t> change;
      WATTCUT_ASSIGN(change, in.Pair(t, "change COMPUTATION:DURATION_UNITS", num_computations - 1, kMaxDurationUnits));
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
      WATTCUT_ASSIGN(watts, in.Number(static_cast<size_t>(i) + 1, "peak_1s_power_w"));
      frontier.SetPeakPower(static_cast<size_t>(i), watts);
    }
    if (!in.Next()) return in.Fail("the file ends early; expected a 'end' line");
  }
  if (in.Token(0) != "end") return in.Fail("expected a 'end' line, got '" + PrintableText(in.Token(0), 40) + "'");
  if (in.size() != 1) return in.Fail("end: expected nothing after 'end', got '" + PrintableText(in.Token(1), 40) + "'");
  if (in.Next()) return in.Fail("text after the 'end' line");
  return frontier;
}

Result<Frontier> ReadFrontierFile(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status given = fs::status(path, ec);
  if (!fs::exists(given)) return Error::NotFound(path + ": no such file or directory");
  std::string file = path;
  if (fs::is_directory(given)) {
    file = (fs::path(path) / kFrontierFileName).string();
    if (!fs::exists(file, ec) && fs::exists(fs::path(path) / "plans.jsonl", ec)) {
      return Error::NotFound(path + ": a DAG's frontier (wattcut frontier --dag): its plans are " + path +
                             "/plans.jsonl, one JSON line per point (docs/planner.md, Generic DAGs); this reads "
                             "a pipeline's " +
                             std::string(kFrontierFileName));
    }
    if (!fs::exists(file, ec)) {
      return Error::NotFound(path + ": no " + std::string(kFrontierFileName) +
                             " in this folder (is it a `wattcut frontier --out` folder? older versions wrote no "
                             "frontier.wattcut: run wattcut frontier again)");
    }
  }
  if (fs::is_directory(file, ec)) return Error{file + ": is a directory, expected a frontier file"};
  const uintmax_t size = fs::file_size(file, ec);
  if (ec) return Error::IOError(file + ": cannot read its size: " + ec.message());
  if (size > kMaxFrontierFileBytes) {
    return Error{file + ": file is " + std::to_string(size) + " bytes, more than the " +
                 std::to_string(kMaxFrontierFileBytes) + " a frontier file may have"};
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error::IOError(file + ": cannot open file for reading");
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (static_cast<uintmax_t>(in.gcount()) != size) return Error::IOError(file + ": read error");
  return ParseFrontierFile(text, file);
}

#undef WATTCUT_ASSIGN
#undef WATTCUT_CONCAT
#undef WATTCUT_CONCAT_INNER

}  // namespace wattcut
