#include "wattcut/polca/arrival_expansion.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "wattcut/polca/arrival_sort.h"

namespace wattcut::polca {

double DiurnalEnvelope(const ExpansionOptions& options, double t_s) {
  double hour = std::fmod(t_s / 3600.0, 24.0);
  double day = std::floor(t_s / 86400.0);
  double cosine = 0.5 * (1 + std::cos(2 * std::numbers::pi * (hour - options.peak_hour) / 24.0));
  double envelope = options.diurnal_trough + (1 - options.diurnal_trough) * cosine;
  if (std::fmod(day, 7.0) >= 5.0) envelope *= options.weekend_factor;
  return envelope;
}

double ArrivalExpansion::BlockSecondsFor(const RequestTrace& trace) {
  return std::max(3600.0, std::ceil(trace.span_s() + 1e-9));
}

ArrivalExpansion::ArrivalExpansion(const RequestTrace& trace, ExpansionOptions options)
    : trace_(trace), options_(options) {
  block_s_ = BlockSecondsFor(trace);
  trace_rate_per_s_ = static_cast<double>(trace.requests().size()) / block_s_;
  window_s_ = std::min(block_s_, std::max(kMinWindowS, kWindowTraceRequests / trace_rate_per_s_));
}

bool ArrivalExpansion::StartReplayBlock() {
  start_s_ = static_cast<double>(next_block_) * block_s_;
  if (start_s_ >= options_.duration_s) return false;
  end_s_ = std::min(options_.duration_s, start_s_ + block_s_);
  const SplitMix64 rng(options_.seed, static_cast<uint64_t>(next_block_));
  ++next_block_;

  // The largest envelope in the block bounds the keep probability.
  double max_envelope = 0;
  for (double t = start_s_; t <= end_s_; t += 60) max_envelope = std::max(max_envelope, DiurnalEnvelope(options_, t));
  max_envelope = std::max(max_envelope, DiurnalEnvelope(options_, end_s_));
  double copies_needed = options_.peak_rate_per_s * max_envelope / trace_rate_per_s_;
  int copies = std::max(1, static_cast<int>(std::ceil(copies_needed - 1e-9)));
  keep_scale_ = options_.peak_rate_per_s / (trace_rate_per_s_ * copies);

  // The block's draws, in order: per copy its shift, then per request u (kept?) and v (priority).
  const auto& requests = trace_.requests();
  const uint64_t draws_per_copy = 1 + 2 * static_cast<uint64_t>(requests.size());
  runs_.clear();
  for (int c = 0; c < copies; ++c) {
    SplitMix64 at = rng;
    at.Discard(static_cast<uint64_t>(c) * draws_per_copy);
    const double shift = at.Uniform() * block_s_;
    // Offsets rise with the trace's (sorted) arrival times; the first that reaches the block's
    // length wraps, and so do all after it.
    const size_t wrap = static_cast<size_t>(
        std::partition_point(requests.begin(), requests.end(),
                             [&](const TraceRequest& r) { return !(r.arrival_s + shift >= block_s_); }) -
        requests.begin());
    CopyRun before{0, wrap, shift, false, at};
    CopyRun after{wrap, requests.size(), shift, true, at};
    after.draws.Discard(2 * static_cast<uint64_t>(wrap));
    if (before.next < before.end) runs_.push_back(before);
    if (after.next < after.end) runs_.push_back(after);
  }
  window_ = 0;
  windows_ = std::max<int64_t>(1, static_cast<int64_t>(std::ceil((end_s_ - start_s_) / window_s_)));
  return true;
}

double ArrivalExpansion::ArrivalTime(const CopyRun& run, size_t i) const {
  double offset = trace_.requests()[i].arrival_s + run.shift_s;
  if (run.wrapped) offset -= block_s_;
  return start_s_ + offset;
}

bool ArrivalExpansion::NextBlock(ArrivalBlock& out) {
  out.clear();
  if (!in_block_ || window_ == windows_) {
    in_block_ = StartReplayBlock();
    if (!in_block_) return false;
  }
  ++window_;
  const double until = window_ == windows_ ? end_s_ : start_s_ + window_s_ * static_cast<double>(window_);
  const auto& requests = trace_.requests();
  for (size_t k = 0; k < runs_.size(); ++k) {
    // Each run reads the trace where its copy is, far from the others' places; in a large row
    // the line is out of cache by the time the run comes back to it (a line is read once a
    // copy an hour). A later run's line is asked for while this one is read.
    if (k + kPrefetchRuns < runs_.size()) __builtin_prefetch(requests.data() + runs_[k + kPrefetchRuns].next);
    CopyRun& run = runs_[k];
    for (; run.next < run.end; ++run.next) {
      const double t = ArrivalTime(run, run.next);
      if (t >= until) break;  // later windows' (or, past end_s_, no window's: the run ends there)
      const double u = run.draws.Uniform();
      const double v = run.draws.Uniform();
      if (u >= keep_scale_ * DiurnalEnvelope(options_, t)) continue;
      const TraceRequest& r = requests[run.next];
      out.push_back({t, r.context_tokens, r.generated_tokens,
                     v < options_.low_priority_share ? Priority::kLow : Priority::kHigh});
    }
  }
  SortArrivals(out, scratch_);
  return true;
}

std::vector<Arrival> ArrivalExpansion::All() {
  std::vector<Arrival> all;
  ArrivalBlock block;
  while (NextBlock(block)) all.insert(all.end(), block.begin(), block.end());
  return all;
}

}  // namespace wattcut::polca
