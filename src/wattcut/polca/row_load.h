// The load a row carries, stated two ways: requests per second per serving server at the peak
// (workload.peak_requests_per_server_s, what the arrivals are drawn with), and the busy share of a
// server's capacity that those requests bring (workload.peak_utilization). A trace whose requests
// are heavier (longer prompts, longer answers) brings more work per request, so the same requests
// per second load a row more; stated by work, it is simulated at a comparable load.
//
// A request's work is the server time it takes at the maximum clock when the server serves at
// its capacity: its prefill alone (service.prompt_s_base + service.prompt_s_per_token x prompt
// tokens) plus its share of full-batch decode iterations (generated tokens x the iteration time
// at service.max_batch / max_batch). Utilization = requests per second x mean work: 1 is a server
// that prefills and decodes at full batch without a pause; above it the queue grows without bound.
// (A prefill that batches several prompts pays prompt_s_base once, so this work is an upper
// bound by at most prompt_s_base per request.)
#pragma once

#include <cstdint>

#include "wattcut/base/result.h"
#include "wattcut/polca/polca_config.h"

namespace wattcut::polca {

class RequestTrace;
struct TraceTimeline;

// The requests the load is measured on, summed.
struct TraceWork {
  int64_t requests = 0;
  double prompt_tokens = 0;
  double generated_tokens = 0;
};
// The whole trace (--time-of-day cosine replays all of it in every block).
TraceWork WorkOf(const RequestTrace& trace);
// The busiest full hour (--time-of-day trace scales the row's rate by it).
TraceWork WorkOf(const TraceTimeline& timeline);

// Mean work per request, server-seconds at the maximum clock (0 without requests).
double MeanRequestWorkS(const PolcaConfig& config, const TraceWork& work);

struct RowLoad {
  double peak_requests_per_server_s = 0;
  double peak_utilization = 0;
  double mean_request_work_s = 0;
  bool stated_by_work = false;  // workload.peak_utilization set it
};

// The load of a config whose rate is set (as ResolveRowLoad leaves it), in both terms.
RowLoad LoadOf(const PolcaConfig& config, const TraceWork& work);

// The row's load in both terms. When workload.peak_utilization is set (> 0) it states the load:
// peak_requests_per_server_s becomes peak_utilization / mean work, written into `config`; an error
// when that rate is outside the simulator's bound (row_limits.h). Otherwise the config's rate
// stays, and its utilization is reported.
Result<RowLoad> ResolveRowLoad(PolcaConfig& config, const TraceWork& work);

}  // namespace wattcut::polca
