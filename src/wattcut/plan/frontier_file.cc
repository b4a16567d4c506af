#include "wattcut/plan/frontier_file.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "wattcut/base/general_text.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/dag/computation_dag.h"
#include "wattcut/plan/dag_frontier_file.h"
#include "wattcut/plan/frontier_text.h"
#include "wattcut/plan/planning_limits.h"
#include "wattcut/profile/operation_options.h"

namespace wattcut {
namespace {

using frontier_text::AppendInt;
using frontier_text::AppendNumber;
using frontier_text::AppendPoints;
using frontier_text::FormatLine;
using frontier_text::FrontierText;
using frontier_text::LineReader;
using frontier_text::ReadPoints;
using frontier_text::ReadStart;
using frontier_text::ReadText;

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
  AppendPoints(out, frontier);
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
  WATTCUT_TEXT_ASSIGN(setup.unit_time_s, in.Number(1, "unit_time_s"));
  if (!(setup.unit_time_s > 0)) return in.Fail("unit_time_s: expected a number > 0");
  if (auto s = in.Expect("p2p_power_w"); !s) return s.error();
  WATTCUT_TEXT_ASSIGN(setup.p2p_power_w, in.Number(1, "p2p_power_w"));
  if (auto s = in.Expect("stages"); !s) return s.error();
  int64_t num_stages = 0;
  WATTCUT_TEXT_ASSIGN(num_stages, in.Integer(1, "stages", 1, kMaxStages));
  int64_t chunks = 1;
  if (v2) {
    if (auto s = in.Expect("chunks"); !s) return s.error();
    WATTCUT_TEXT_ASSIGN(chunks, in.Integer(1, "chunks", 1, kMaxStages / num_stages));
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
    WATTCUT_TEXT_ASSIGN(stage, in.Integer(1, "schedule stage", s, s));
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
      WATTCUT_TEXT_ASSIGN(option, in.Pair(i, "options DURATION_UNITS:FREQ_MHZ", kMaxDurationUnits, 100000));
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
  // The schedules as a whole: every (chunk, microbatch) of every stage's forward and backward
  // exactly once, in an order whose dependencies are not cyclic (a backward before its forward).
  if (auto dag = BuildComputationDag(setup.schedule); !dag.ok()) {
    return Error::Corruption(source + ": the schedule lines do not make a pipeline schedule: " + dag.error().message);
  }
  std::vector<int64_t> start;
  WATTCUT_TEXT_ASSIGN(start, ReadStart(in, num_computations));
  Frontier frontier(std::move(setup), std::move(start));
  if (Status st = ReadPoints(in, frontier); !st.ok()) return st.error();
  return frontier;
}

Result<Frontier> ReadFrontierFile(const std::string& path) {
  Result<FrontierText> read = ReadText(path);
  if (!read.ok()) return read.error();
  if (FormatLine(read->text) == kDagFrontierFormat) {
    return Error{read->file + ": a generic DAG's frontier (" + std::string(kDagFrontierFormat) +
                 "), not a pipeline's: read it with ReadDagFrontierFile (plan/dag_frontier_file.h)"};
  }
  return ParseFrontierFile(read->text, read->file);
}

}  // namespace wattcut
