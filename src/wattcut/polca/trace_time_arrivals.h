// A row's arrivals on a streamed trace's own timeline (--time-of-day trace): its days and week
// instead of the cosine envelope of ArrivalExpansion (docs/polca.md, assumption 1 made a choice).
//
// The method:
//  * The trace's rate is scaled to the row: the busiest full hour of the trace (TraceTimeline)
//    gets `peak_rate_per_s`, the row-wide rate at the peak (serving servers x
//    workload.peak_requests_per_server_s). The scale s = peak_rate_per_s x 3600 / (requests of
//    that hour) applies to every hour, so each hour's arrivals are its trace requests times s.
//  * Each trace request becomes floor(s) arrivals, and one more with probability s - floor(s)
//    (below 1: the trace thinned). The first arrival keeps the request's own time; the others
//    (copies, s > 1) are placed uniformly within kCopyWindowS after it, so the trace's shape is
//    kept from a minute up and its joint prompt/output lengths always.
//  * Each arrival is high or low priority at random with the low-priority share.
// Arrivals come an hour of trace time per block, read as the file is streamed (RequestTraceReader):
// memory holds one block, never the trace. Draws come from SplitMix64 streams keyed by (seed,
// block): the same seed, trace and rate give the same arrivals.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/polca/arrival_source.h"
#include "wattcut/polca/request_trace_reader.h"
#include "wattcut/polca/trace_timeline.h"

namespace wattcut::polca {

struct TraceTimeOptions {
  double duration_s = 86400;    // at most the timeline's duration_s()
  double peak_rate_per_s = 40;  // row-wide arrival rate at the trace's busiest hour
  double low_priority_share = 0.5;
  uint64_t seed = 1;
};

class TraceTimeArrivals : public ArrivalSource {
 public:
  static constexpr double kBlockS = 3600;
  static constexpr double kCopyWindowS = 60;

  // Opens the timeline's file for a second pass; `timeline` must outlive the source.
  static Result<std::unique_ptr<TraceTimeArrivals>> Open(const TraceTimeline& timeline, TraceTimeOptions options);
  // The scale s: arrivals per trace request that give the busiest hour `peak_rate_per_s`.
  static double ScaleFor(const TraceTimeline& timeline, double peak_rate_per_s);

  double scale() const { return scale_; }
  bool NextBlock(ArrivalBlock& out) override;
  Status status() const override { return status_; }

 private:
  TraceTimeArrivals(const TraceTimeline& timeline, TraceTimeOptions options, RequestTraceReader reader);
  // Reads the next request into pending_; false at the end of the trace (or on a failure).
  bool ReadPending();

  const TraceTimeline& timeline_;
  TraceTimeOptions options_;
  RequestTraceReader reader_;
  double scale_ = 1;
  int64_t next_block_ = 0;
  std::optional<TraceRequest> pending_;  // read, not yet in a block
  bool trace_done_ = false;
  ArrivalBlock carried_;  // copies that fall in the next block
  ArrivalBlock scratch_;  // SortArrivals' working space
  Status status_ = Status::Ok();
};

}  // namespace wattcut::polca
