#include "wattcut/polca/arrival_expansion.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "wattcut/polca/arrival_sort.h"
#include "wattcut/polca/random.h"

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
}

bool ArrivalExpansion::NextBlock(ArrivalBlock& out) {
  out.clear();
  double start = static_cast<double>(next_block_) * block_s_;
  if (start >= options_.duration_s) return false;
  double end = std::min(options_.duration_s, start + block_s_);
  SplitMix64 rng(options_.seed, static_cast<uint64_t>(next_block_));
  ++next_block_;

  // The largest envelope in the block bounds the keep probability.
  double max_envelope = 0;
  for (double t = start; t <= end; t += 60) max_envelope = std::max(max_envelope, DiurnalEnvelope(options_, t));
  max_envelope = std::max(max_envelope, DiurnalEnvelope(options_, end));
  double copies_needed = options_.peak_rate_per_s * max_envelope / trace_rate_per_s_;
  int copies = std::max(1, static_cast<int>(std::ceil(copies_needed - 1e-9)));
  double keep_scale = options_.peak_rate_per_s / (trace_rate_per_s_ * copies);

  const auto& requests = trace_.requests();
  out.reserve(static_cast<size_t>(copies_needed * static_cast<double>(requests.size())) + 16);
  for (int c = 0; c < copies; ++c) {
    double shift = rng.Uniform() * block_s_;
    for (const TraceRequest& r : requests) {
      double offset = r.arrival_s + shift;
      if (offset >= block_s_) offset -= block_s_;
      double t = start + offset;
      double u = rng.Uniform();
      double v = rng.Uniform();
      if (t >= end) continue;
      if (u >= keep_scale * DiurnalEnvelope(options_, t)) continue;
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
