#include "wattcut/polca/trace_timeline.h"

#include <algorithm>
#include <cmath>

#include "wattcut/polca/request_trace_reader.h"

namespace wattcut::polca {

Result<TraceTimeline> TraceTimeline::Scan(const std::string& path) {
  Result<RequestTraceReader> reader = RequestTraceReader::Open(path);
  if (!reader.ok()) return reader.error();
  TraceTimeline timeline;
  timeline.path = path;
  TraceRequest request;
  while (true) {
    Result<bool> more = reader->Next(request);
    if (!more.ok()) return more.error();
    if (!*more) break;
    // The span is bounded (kMaxStreamedTraceSpanS): at most 2,160 hours.
    const auto hour = static_cast<size_t>(request.arrival_s / 3600);
    if (hour >= timeline.hourly_requests.size()) {
      timeline.hourly_requests.resize(hour + 1, 0);
      timeline.hourly_prompt_tokens.resize(hour + 1, 0);
      timeline.hourly_generated_tokens.resize(hour + 1, 0);
    }
    ++timeline.hourly_requests[hour];
    timeline.hourly_prompt_tokens[hour] += request.context_tokens;
    timeline.hourly_generated_tokens[hour] += request.generated_tokens;
    timeline.span_s = request.arrival_s;
  }
  timeline.requests = reader->requests_read();
  timeline.start_timestamp = reader->start_timestamp();
  timeline.start_utc_s = reader->start_utc_s();
  if (timeline.full_hours() == 0) {
    return Error{path + ": the trace spans " + std::to_string(timeline.span_s) +
                 " s, less than the hour --time-of-day trace needs (its busiest hour sets the row's rate)"};
  }
  return timeline;
}

size_t TraceTimeline::full_hours() const { return static_cast<size_t>(std::floor(span_s / 3600)); }

size_t TraceTimeline::busiest_hour() const {
  const size_t full = std::min(full_hours(), hourly_requests.size());
  if (full == 0) return 0;
  return static_cast<size_t>(std::max_element(hourly_requests.begin(), hourly_requests.begin() + full) -
                             hourly_requests.begin());
}

int64_t TraceTimeline::busiest_hour_requests() const {
  return hourly_requests.empty() ? 0 : hourly_requests[busiest_hour()];
}

double TraceTimeline::duration_s() const { return std::max(1.0, std::ceil(span_s + 1e-9)); }

int64_t TraceTimeline::RequestsBefore(double t_s) const {
  int64_t n = 0;
  for (size_t h = 0; h < hourly_requests.size() && static_cast<double>(h) * 3600 < t_s; ++h) n += hourly_requests[h];
  return n;
}

}  // namespace wattcut::polca
