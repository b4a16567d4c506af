// Test support: hours of synthetic inference requests for the row simulator's tests, arriving at
// a steady rate with context and generated lengths that cycle through their ranges.
#pragma once

#include <vector>

#include "wattcut/polca/request_trace.h"

namespace wattcut::polca::testing {

// An hour of 18,000 requests, one every 0.2 s: contexts of 200-2,199 tokens, 20-319 generated.
inline RequestTrace SyntheticHourAtFiveRequestsASecond() {
  std::vector<TraceRequest> r;
  for (int i = 0; i < 18000; ++i) r.push_back({i * 0.2, 200 + (i * 37) % 2000, 20 + (i * 13) % 300});
  return *RequestTrace::FromRequests(r, "synthetic");
}

// An hour of 7,200 requests, one every 0.5 s: contexts of 200-1,699 tokens, 20-219 generated.
inline RequestTrace SyntheticHourAtTwoRequestsASecond() {
  std::vector<TraceRequest> r;
  for (int i = 0; i < 7200; ++i) r.push_back({i * 0.5, 200 + (i * 37) % 1500, 20 + (i * 13) % 200});
  return *RequestTrace::FromRequests(r, "synthetic");
}

}  // namespace wattcut::polca::testing
