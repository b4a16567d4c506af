#include "wattcut/profile/profile_csv.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/general_text.h"
#include "wattcut/base/printable_text.h"

namespace wattcut {
namespace {

constexpr const char* kBaseColumns[] = {"stage", "instruction", "frequency", "time", "energy"};
constexpr const char* kRankColumns[] = {"rank", "dp_rank", "pp_rank", "tp_rank"};
constexpr const char* kStatColumns[] = {"samples", "time_std", "energy_std"};

// Plausibility bounds of one row: one computation of one microbatch on one stage (or one
// rank) does not take more than a day, nor draw more than 100 kW (a tensor-parallel group
// of 64 GPUs at 1.5 kW) for that day. Anything beyond is a unit or export error.
constexpr double kMaxTimeS = 86400;
constexpr const char* kMaxTimeText = "86400";
constexpr double kMaxEnergyJ = 1e10;
constexpr const char* kMaxEnergyText = "1e10";

std::string ExpectedHeader() {
  return "expected columns stage,instruction,frequency,time,energy (optionally preceded by "
         "rank,dp_rank,pp_rank,tp_rank and followed by samples,time_std,energy_std)";
}

struct RowKey {
  int64_t dp_rank, pp_rank, tp_rank;
  int stage;
  InstructionKind kind;
  int64_t freq_mhz;
  auto operator<=>(const RowKey&) const = default;
};

Result<AggregatedProfile> Convert(const CsvTable& table, int expected_stages) {
  const std::string& file = table.source_name();
  // Columns: all known, none missing, none repeated.
  std::set<std::string> known;
  for (const char* c : kBaseColumns) known.insert(c);
  for (const char* c : kRankColumns) known.insert(c);
  for (const char* c : kStatColumns) known.insert(c);
  std::set<std::string> seen;
  for (const std::string& name : table.header()) {
    if (!known.count(name)) {
      return Error{file + ":1: unknown column '" + PrintableText(name) + "'; " + ExpectedHeader()};
    }
    if (!seen.insert(name).second) return Error{file + ":1: column '" + PrintableText(name) + "' appears twice"};
  }
  for (const char* c : kBaseColumns) {
    if (!seen.count(c)) {
      return Error{file + ":1: missing column '" + std::string(c) + "'; " + ExpectedHeader()};
    }
  }
  int rank_columns_present = 0;
  for (const char* c : kRankColumns) rank_columns_present += seen.count(c) ? 1 : 0;
  const bool per_rank = rank_columns_present > 0;
  if (per_rank && rank_columns_present != 4) {
    for (const char* c : kRankColumns) {
      if (!seen.count(c)) {
        return Error{file + ":1: missing column '" + std::string(c) +
                     "' (the per-rank layout needs all of rank,dp_rank,pp_rank,tp_rank)"};
      }
    }
  }
  const size_t col_stage = *table.column("stage");
  const size_t col_inst = *table.column("instruction");
  const size_t col_freq = *table.column("frequency");
  const size_t col_time = *table.column("time");
  const size_t col_energy = *table.column("energy");

  if (table.rows().empty()) return Error{file + ": no measurement rows after the header"};

  // (dp, pp, tp, stage, kind, freq) -> (time, energy) ; duplicates rejected.
  struct RowValue {
    double time_s, energy_j;
    int line;      // for the duplicate-row message
    int64_t rank;  // the rank column, -1 in the basic layout
  };
  std::map<RowKey, RowValue> rows;  // one map: a 400,000-row profile holds one node per row
  int max_stage = -1;
  for (const CsvRow& row : table.rows()) {
    Result<int64_t> stage = table.integer(row, col_stage);
    if (!stage.ok()) return stage.error();
    if (*stage < 0) {
      return Error{table.where(row, col_stage) + "expected a stage number >= 0, got " + std::to_string(*stage)};
    }
    if (expected_stages > 0 && *stage >= expected_stages) {
      return Error{table.where(row, col_stage) + "expected a stage number in 0.." +
                   std::to_string(expected_stages - 1) + " (the pipeline has " + std::to_string(expected_stages) +
                   " stages), got " + std::to_string(*stage)};
    }
    if (*stage > 100000) {
      return Error{table.where(row, col_stage) + "stage number " + std::to_string(*stage) + " is implausibly large"};
    }
    auto kind = ParseInstruction(row.fields[col_inst]);
    if (!kind) {
      return Error{table.where(row, col_inst) + "expected " + std::string(InstructionNameList()) + ", got '" +
                   PrintableText(row.fields[col_inst]) + "'"};
    }
    Result<int64_t> freq = table.integer(row, col_freq);
    if (!freq.ok()) return freq.error();
    if (*freq <= 0 || *freq > 100000) {
      return Error{table.where(row, col_freq) + "expected a frequency in MHz (1..100000), got " +
                   std::to_string(*freq)};
    }
    Result<double> time = table.number(row, col_time);
    if (!time.ok()) return time.error();
    if (*time <= 0) {
      return Error{table.where(row, col_time) + "expected a time in seconds > 0, got " + row.fields[col_time]};
    }
    if (*time > kMaxTimeS) {
      return Error{table.where(row, col_time) + "expected a time in seconds of at most " + kMaxTimeText +
                   " (one day for one computation), got " + row.fields[col_time]};
    }
    Result<double> energy = table.number(row, col_energy);
    if (!energy.ok()) return energy.error();
    if (*energy < 0) {
      return Error{table.where(row, col_energy) + "expected an energy in joules >= 0, got " + row.fields[col_energy]};
    }
    if (*energy > kMaxEnergyJ) {
      return Error{table.where(row, col_energy) + "expected an energy in joules of at most " + kMaxEnergyText +
                   " (a day at 100 kW for one computation), got " + row.fields[col_energy]};
    }
    for (const char* c : kStatColumns) {
      if (auto col = table.column(c)) {
        Result<double> v = table.number(row, *col);
        if (!v.ok()) return v.error();
        if (*v < 0) return Error{table.where(row, *col) + "expected a value >= 0, got " + row.fields[*col]};
      }
    }
    RowKey key{0, *stage, 0, static_cast<int>(*stage), *kind, *freq};
    int64_t rank = -1;
    if (per_rank) {
      int64_t ranks[4];
      for (int i = 0; i < 4; ++i) {
        size_t col = *table.column(kRankColumns[i]);
        Result<int64_t> v = table.integer(row, col);
        if (!v.ok()) return v.error();
        if (*v < 0) {
          return Error{table.where(row, col) + "expected a rank >= 0, got " + std::to_string(*v)};
        }
        ranks[i] = *v;
      }
      if (ranks[2] != *stage) {
        return Error{table.where(row, *table.column("pp_rank")) + "expected pp_rank to equal stage (" +
                     std::to_string(*stage) + "), got " + std::to_string(ranks[2])};
      }
      rank = ranks[0];
      key.dp_rank = ranks[1];
      key.tp_rank = ranks[3];
    }
    if (auto [it, inserted] = rows.emplace(key, RowValue{*time, *energy, row.line, rank}); !inserted) {
      return Error{file + ":" + std::to_string(row.line) + ": duplicate row: stage " + std::to_string(*stage) + ", " +
                   std::string(InstructionName(*kind)) + ", " + std::to_string(*freq) + " MHz" +
                   (per_rank ? ", dp_rank " + std::to_string(key.dp_rank) + ", tp_rank " + std::to_string(key.tp_rank)
                             : std::string()) +
                   " already appears on line " + std::to_string(it->second.line)};
    }
    max_stage = std::max(max_stage, static_cast<int>(*stage));
  }

  const int num_stages = expected_stages > 0 ? expected_stages : max_stage + 1;
  if (num_stages > max_stage + 1) {
    // Reported before a profile of num_stages stages is allocated (it may be huge).
    return Error{file + ": stage " + std::to_string(max_stage + 1) +
                 " has no 'forward' measurements (expected every stage 0.." + std::to_string(num_stages - 1) +
                 " to have forward and backward rows)"};
  }
  // Every (stage, instruction, frequency) that every rank of the stage measured, aggregated
  // over tp, then dp (rank_aggregation.h); the basic layout is one rank per stage.
  std::vector<RankMeasurement> measurements;
  measurements.reserve(rows.size());
  for (const auto& [key, value] : rows) {
    measurements.push_back(RankMeasurement{key.stage, key.kind, static_cast<int>(key.freq_mhz),
                                           RankId{value.rank, key.dp_rank, key.tp_rank}, value.time_s, value.energy_j});
  }
  Result<AggregatedProfile> aggregated = AggregateRankMeasurements(std::move(measurements), num_stages);
  if (!aggregated.ok()) return Error{file + ": " + aggregated.error().message};
  return std::move(aggregated).value();
}

}  // namespace

Result<AggregatedProfile> ReadProfileCsvWithWarnings(const std::string& path, int expected_stages) {
  Result<CsvTable> table = CsvTable::Read(path);
  if (!table.ok()) return table.error();
  return Convert(*table, expected_stages);
}

Result<AggregatedProfile> ParseProfileCsvWithWarnings(const std::string& text, const std::string& source_name,
                                                      int expected_stages) {
  Result<CsvTable> table = CsvTable::Parse(text, source_name);
  if (!table.ok()) return table.error();
  return Convert(*table, expected_stages);
}

Result<Profile> ReadProfileCsv(const std::string& path, int expected_stages) {
  Result<AggregatedProfile> read = ReadProfileCsvWithWarnings(path, expected_stages);
  if (!read.ok()) return read.error();
  return std::move(read->profile);
}

Result<Profile> ParseProfileCsv(const std::string& text, const std::string& source_name, int expected_stages) {
  Result<AggregatedProfile> parsed = ParseProfileCsvWithWarnings(text, source_name, expected_stages);
  if (!parsed.ok()) return parsed.error();
  return std::move(parsed->profile);
}

std::string ProfileCsvText(const Profile& profile) {
  std::string csv = "stage,instruction,frequency,time,energy\n";
  for (int s = 0; s < profile.num_stages(); ++s) {
    for (int k = 0; k < kNumInstructionKinds; ++k) {
      const auto kind = static_cast<InstructionKind>(k);
      for (const Measurement& m : profile.measurements(s, kind)) {
        csv += std::to_string(s) + "," + std::string(InstructionName(kind)) + "," + std::to_string(m.freq_mhz) + "," +
               GeneralText(m.time_s) + "," + GeneralText(m.energy_j) + "\n";
      }
    }
  }
  return csv;
}

}  // namespace wattcut
