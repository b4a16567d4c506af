// Turns one short request trace (about an hour) into days of arrivals for a row.
//
// The method, an explicit modelling assumption (docs/polca.md):
//  * Time is cut into blocks as long as the trace (at least 1 h). In each block the
//    trace is replayed as c independent copies, each circularly shifted by a random
//    offset within the block, so the trace's second-to-minute burstiness and its
//    joint distribution of prompt and output lengths are kept.
//  * Each replayed request is kept with probability rate(t) / (c * trace_rate), where
//    rate(t) = peak_rate * envelope(t) follows a diurnal cosine between `trough` (at
//    peak_hour + 12 h) and 1 (at peak_hour), times `weekend_factor` on days 6 and 7.
//    c is the smallest count that keeps that probability <= 1.
//  * Each request is high or low priority at random with the low-priority share.
// Every random draw comes from SplitMix64 streams keyed by (seed, block), so a run is
// reproducible from its seed and blocks do not depend on each other.
//
// How it is built (not what): a replay block is handed out in windows of window_s(), each sorted
// on its own, never as a whole. Each copy's requests, in trace order, are two runs whose arrival
// times rise (before and after the shift wraps around), so a window is every run's next requests
// up to the window's end, each with its draws found in O(1) (SplitMix64::Discard). The arrivals,
// their order and every draw are those of the whole block built at once and sorted (the test
// checks it): only the memory changes. A window of a 2,560-server row is a second, 1,800
// arrivals (43 kB) at the peak, and stays in the core's L2 cache beside the servers, where its
// whole hour was 100 MB written, scattered and read back from memory, and a 10-second window
// (430 kB, twice over with the sort's copy) still pushed the servers out of L2 at every window.
#pragma once

#include <cstdint>
#include <vector>

#include "wattcut/polca/arrival_source.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/random.h"
#include "wattcut/polca/request_trace.h"

namespace wattcut::polca {

struct ExpansionOptions {
  double duration_s = 86400;
  double peak_rate_per_s = 40;  // row-wide arrival rate at the daily peak
  double diurnal_trough = 0.5;
  double peak_hour = 14;
  double weekend_factor = 1.0;
  double low_priority_share = 0.5;
  uint64_t seed = 1;
};

// The rate multiplier at time t (t = 0 is midnight starting day 1, a weekday), in
// [0, 1] (the peak of a weekday is 1).
double DiurnalEnvelope(const ExpansionOptions& options, double t_s);

class ArrivalExpansion : public ArrivalSource {
 public:
  // `trace` must outlive the expansion.
  ArrivalExpansion(const RequestTrace& trace, ExpansionOptions options);

  double block_s() const { return block_s_; }
  // The block length for `trace`: its span rounded up to a second, at least an hour.
  static double BlockSecondsFor(const RequestTrace& trace);
  // How much of a replay block one NextBlock hands out: kMinWindowS, or longer for a sparse
  // trace, so that each copy's run (visited once a window, every window) gives about
  // kWindowTraceRequests of its requests a visit. The conversation trace's 5.4 requests a
  // second make it a second. Either way the visits cost at most 2 / kWindowTraceRequests an
  // arrival (a copy is two runs), at any row size.
  static constexpr double kMinWindowS = 1;
  static constexpr double kWindowTraceRequests = 4;
  double window_s() const { return window_s_; }
  // How many runs ahead NextBlock asks for a run's trace line (a run gives a few requests, a
  // line's fetch from memory takes about as long as a run's work).
  static constexpr size_t kPrefetchRuns = 4;
  // Replaces `out` with the next window's arrivals in time order; false when the
  // duration is exhausted (out is then empty).
  bool NextBlock(ArrivalBlock& out) override;
  // Every arrival of the whole duration (for tests and small runs).
  std::vector<Arrival> All();

 private:
  // One copy's requests [next, end) in trace order, whose arrival times rise: those before the
  // copy's shift wraps around the block, or those after. `draws` is at request `next`'s draws.
  struct CopyRun {
    size_t next = 0;
    size_t end = 0;
    double shift_s = 0;
    bool wrapped = false;
    SplitMix64 draws{0};
  };
  // Sets up replay block next_block_ (its copies, shifts and runs); false past the duration.
  bool StartReplayBlock();
  // Request i's arrival time in `run`'s copy of the current replay block.
  double ArrivalTime(const CopyRun& run, size_t i) const;

  const RequestTrace& trace_;
  ExpansionOptions options_;
  double block_s_;
  double trace_rate_per_s_;
  double window_s_;
  int64_t next_block_ = 0;
  // The replay block being handed out: [start_s_, end_s_), its windows up to window_ done.
  bool in_block_ = false;
  double start_s_ = 0;
  double end_s_ = 0;
  double keep_scale_ = 0;
  int64_t window_ = 0;
  int64_t windows_ = 0;
  std::vector<CopyRun> runs_;
  ArrivalBlock scratch_;  // SortArrivals' working space
};

}  // namespace wattcut::polca
