// The one rule that turns per-rank measurements (every GPU of every pipeline stage, as
// in the Merak/Zeus per-rank CSV layout or the server's rank profiles) into the profile
// of one pipeline: used by the profile CSV reader and by the planning server.
//
// Per (stage, instruction, frequency), a measurement is used only where every rank of
// the stage measured it: every (dp_rank, tp_rank) that has any row for that stage.
// A frequency that some of those ranks lack is left out and reported (a
// DroppedFrequency), because aggregating over fewer GPUs would make it look cheap.
// The kept measurements are aggregated over the tp ranks of each dp replica (the
// maximum time: the stage waits for its slowest tensor-parallel GPU; the summed energy:
// every GPU draws), then averaged over the dp replicas (mean time, mean energy).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/profile/instruction.h"
#include "wattcut/profile/profile.h"

namespace wattcut {

// One GPU of a stage. `rank` is its global rank (-1 when unknown); only dp_rank and
// tp_rank identify it within the stage.
struct RankId {
  int64_t rank = -1;
  int64_t dp_rank = 0;
  int64_t tp_rank = 0;
  bool operator==(const RankId&) const = default;
};

// One measurement of one rank.
struct RankMeasurement {
  int stage = 0;
  InstructionKind kind = InstructionKind::kForward;
  int freq_mhz = 0;
  RankId rank;
  double time_s = 0;
  double energy_j = 0;
};

// A frequency left out of (stage, kind) because `missing_ranks` did not measure it
// (sorted by dp_rank, tp_rank); `num_ranks` is how many ranks the stage has.
struct DroppedFrequency {
  int stage = 0;
  InstructionKind kind = InstructionKind::kForward;
  int freq_mhz = 0;
  std::vector<RankId> missing_ranks;
  int64_t num_ranks = 0;
};

// "stage 0 forward 1410 MHz is not used: rank 1 (dp_rank 0, tp_rank 1) did not measure
// it (1 of 2 ranks of the stage); a frequency is used only where every rank of the stage
// measured it". At most 8 ranks are named, then "and N more".
std::string DroppedFrequencyMessage(const DroppedFrequency& dropped);

struct AggregatedProfile {
  Profile profile;
  std::vector<DroppedFrequency> dropped;  // by stage, kind, frequency descending
};

// Aggregates `measurements` into a profile of `num_stages` stages (measurements of each
// (stage, kind) sorted by frequency, descending). Fails when a stage number is outside
// 0..num_stages-1, when a rank has two measurements of one (stage, kind, frequency), and
// when a (stage, kind) has no measurement left, naming the stage and why. The order of
// `measurements` does not matter.
Result<AggregatedProfile> AggregateRankMeasurements(std::vector<RankMeasurement> measurements, int num_stages);

}  // namespace wattcut
