// Reading a profile CSV, as written by wattcut's online profiler, Perseus's artifact or
// Merak/Zeus.
//
// Two layouts are accepted (header names, in any order):
//   stage,instruction,frequency,time,energy
//   rank,dp_rank,pp_rank,tp_rank,stage,instruction,frequency,time,energy   (Merak/Zeus)
// plus the optional statistics columns samples,time_std,energy_std written by the
// online profiler (read and ignored). Frequencies are MHz, time seconds, energy joules.
//
// In the per-rank layout, `stage` must equal `pp_rank`. Rows of one (dp_rank, pp_rank,
// instruction, frequency) are aggregated over tp ranks: the maximum time (the stage
// waits for its slowest tensor-parallel GPU) and the summed energy (every GPU draws).
// The planner sees one pipeline, so those per-dp-replica aggregates are then averaged
// over dp ranks (mean time, mean energy). A frequency is used for a (stage, instruction)
// only where every rank of the stage measured it; one that some ranks lack is left out
// and reported as a DroppedFrequency (rank_aggregation.h, the rule the server uses too).
//
// Rejected, with "FILE:LINE: column 'NAME': what was expected": missing or unknown
// columns, non-numeric, negative, zero (time) or non-finite values, a time over a day
// (86400 s) or an energy over 1e10 J for one computation, an instruction other
// than forward, backward, backward_input, backward_weight, duplicate rows, a stage number outside 0..S-1 when S is
// given, stages missing from 0..S-1, and a (stage, instruction) with no measurements. Every stage needs forward rows,
// and backward rows or backward_input and backward_weight rows (the zero-bubble passes; a profile may have all three);
// one of the last two alone is an error.
#pragma once

#include <string>

#include "wattcut/base/result.h"
#include "wattcut/profile/profile.h"
#include "wattcut/profile/rank_aggregation.h"

namespace wattcut {

// `expected_stages` <= 0 means: infer S from the largest stage number. The profile and
// the frequencies left out because some rank of their stage did not measure them.
Result<AggregatedProfile> ReadProfileCsvWithWarnings(const std::string& path, int expected_stages = 0);
Result<AggregatedProfile> ParseProfileCsvWithWarnings(const std::string& text, const std::string& source_name,
                                                      int expected_stages = 0);
// The same, for callers that report no warnings.
Result<Profile> ReadProfileCsv(const std::string& path, int expected_stages = 0);
Result<Profile> ParseProfileCsv(const std::string& text, const std::string& source_name, int expected_stages = 0);

// The profile as a CSV with the columns stage,instruction,frequency,time,energy (one row
// per measurement, every number as text that reads back as itself), which
// ParseProfileCsv reads back into the same profile.
std::string ProfileCsvText(const Profile& profile);

}  // namespace wattcut
