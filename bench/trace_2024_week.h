// A synthetic request trace in the Azure 2024 form (TIMESTAMP with microseconds and "+00:00",
// ContextTokens, GeneratedTokens), a week long at the real traces' ~17 million requests, for the
// streaming benchmarks and the memory check (bench/trace_2024_memory.sh). Arrivals are a Poisson
// process whose rate has a diurnal shape (busiest mid-afternoon UTC, a morning shoulder, nights at
// about a third of the peak) and quieter weekend days; token pairs are drawn from a 2023 trace's
// requests when one is given (their joint distribution kept), else from log-normal sizes like the
// conversation trace's (median prompt ~1,000 tokens, output ~250). Seeded SplitMix64: the same
// options write the same file.
#pragma once

#include <cstdint>
#include <string>

#include "wattcut/base/result.h"

namespace wattcut::bench {

struct TraceWeekOptions {
  int64_t requests = 17'000'000;  // expected; the Poisson process gives about this many
  double days = 7;
  std::string start = "2024-05-10 00:00:00";  // a Friday, as the real traces
  std::string tokens_from;                    // a 2023 trace whose token pairs are resampled; "" for log-normal
  uint64_t seed = 1;
};

// The relative arrival rate at `t_s` after the start (the start's day is day 0; days 1 and 2,
// Saturday and Sunday from a Friday start, are weekend days), in (0, 1].
double TraceWeekShape(double t_s);

// Writes the trace to `path`; `written` gets the number of requests.
Status WriteTraceWeek(const std::string& path, const TraceWeekOptions& options, int64_t* written = nullptr);

}  // namespace wattcut::bench
