#include "wattcut/polca/trace_time_arrivals.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "wattcut/polca/arrival_sort.h"
#include "wattcut/polca/random.h"

namespace wattcut::polca {

double TraceTimeArrivals::ScaleFor(const TraceTimeline& timeline, double peak_rate_per_s) {
  const auto busiest = static_cast<double>(timeline.busiest_hour_requests());
  return busiest > 0 ? peak_rate_per_s * 3600 / busiest : 0;
}

Result<std::unique_ptr<TraceTimeArrivals>> TraceTimeArrivals::Open(const TraceTimeline& timeline,
                                                                   TraceTimeOptions options) {
  Result<RequestTraceReader> reader = RequestTraceReader::Open(timeline.path);
  if (!reader.ok()) return reader.error();
  return std::unique_ptr<TraceTimeArrivals>(new TraceTimeArrivals(timeline, options, std::move(*reader)));
}

TraceTimeArrivals::TraceTimeArrivals(const TraceTimeline& timeline, TraceTimeOptions options, RequestTraceReader reader)
    : timeline_(timeline), options_(options), reader_(std::move(reader)) {
  scale_ = ScaleFor(timeline_, options_.peak_rate_per_s);
}

bool TraceTimeArrivals::ReadPending() {
  if (pending_) return true;
  if (trace_done_) return false;
  TraceRequest request;
  Result<bool> more = reader_.Next(request);
  if (!more.ok()) status_ = more.error();
  if (!more.ok() || !*more) {
    trace_done_ = true;
    return false;
  }
  pending_ = request;
  return true;
}

bool TraceTimeArrivals::NextBlock(ArrivalBlock& out) {
  out.clear();
  const double start = static_cast<double>(next_block_) * kBlockS;
  if (!status_.ok() || start >= options_.duration_s) return false;
  if (!ReadPending() && carried_.empty()) return false;
  if (!status_.ok()) return false;
  const double end = std::min(options_.duration_s, start + kBlockS);
  SplitMix64 rng(options_.seed, static_cast<uint64_t>(next_block_));
  ++next_block_;

  ArrivalBlock next_carried;
  for (const Arrival& a : carried_) (a.time_s < end ? out : next_carried).push_back(a);
  carried_.clear();
  const double whole = std::floor(scale_);
  const double extra = scale_ - whole;
  while (ReadPending() && pending_->arrival_s < start + kBlockS) {
    const TraceRequest r = *pending_;
    pending_.reset();
    const int copies = static_cast<int>(whole) + (rng.Uniform() < extra ? 1 : 0);
    for (int c = 0; c < copies; ++c) {
      const double t = r.arrival_s + (c == 0 ? 0.0 : rng.Uniform() * kCopyWindowS);
      const Priority priority = rng.Uniform() < options_.low_priority_share ? Priority::kLow : Priority::kHigh;
      if (t >= options_.duration_s) continue;
      (t < end ? out : next_carried).push_back({t, r.context_tokens, r.generated_tokens, priority});
    }
  }
  if (!status_.ok()) {
    out.clear();
    return false;
  }
  carried_ = std::move(next_carried);
  SortArrivals(out, scratch_);
  return true;
}

}  // namespace wattcut::polca
