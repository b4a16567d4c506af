#include "wattcut/polca/row_load.h"

#include "wattcut/base/general_text.h"
#include "wattcut/polca/inference_power_model.h"
#include "wattcut/polca/request_trace.h"
#include "wattcut/polca/row_limits.h"
#include "wattcut/polca/trace_timeline.h"

namespace wattcut::polca {

TraceWork WorkOf(const RequestTrace& trace) {
  TraceWork work;
  for (const TraceRequest& r : trace.requests()) {
    ++work.requests;
    work.prompt_tokens += r.context_tokens;
    work.generated_tokens += r.generated_tokens;
  }
  return work;
}

TraceWork WorkOf(const TraceTimeline& timeline) {
  TraceWork work;
  if (timeline.hourly_requests.empty()) return work;
  const size_t hour = timeline.busiest_hour();
  work.requests = timeline.hourly_requests[hour];
  work.prompt_tokens = timeline.hourly_prompt_tokens[hour];
  work.generated_tokens = timeline.hourly_generated_tokens[hour];
  return work;
}

double MeanRequestWorkS(const PolcaConfig& config, const TraceWork& work) {
  if (work.requests <= 0) return 0;
  const InferencePowerModel model(config);
  const int batch = config.service.max_batch;
  const double n = static_cast<double>(work.requests);
  const double prefill_s = n * config.service.prompt_s_base + config.service.prompt_s_per_token * work.prompt_tokens;
  const double decode_s = work.generated_tokens * model.TokenIterationSeconds(batch) / batch;
  return (prefill_s + decode_s) / n;
}

RowLoad LoadOf(const PolcaConfig& config, const TraceWork& work) {
  RowLoad load;
  load.mean_request_work_s = MeanRequestWorkS(config, work);
  load.peak_requests_per_server_s = config.workload.peak_requests_per_server_s;
  load.peak_utilization = load.peak_requests_per_server_s * load.mean_request_work_s;
  load.stated_by_work = config.workload.peak_utilization > 0;
  return load;
}

Result<RowLoad> ResolveRowLoad(PolcaConfig& config, const TraceWork& work) {
  if (config.workload.peak_utilization > 0) {
    const double work_s = MeanRequestWorkS(config, work);
    if (work_s <= 0) return Error{"workload.peak_utilization: the trace has no requests to load by"};
    const double rate = config.workload.peak_utilization / work_s;
    if (rate > kMaxRequestsPerServerS) {
      return Error{"workload.peak_utilization = " + GeneralText(config.workload.peak_utilization, 6) + " needs " +
                   GeneralText(rate, 6) + " requests/s per server with this trace's requests (" +
                   GeneralText(work_s, 6) + " s of work each), above the bound of " +
                   GeneralText(kMaxRequestsPerServerS, 6)};
    }
    config.workload.peak_requests_per_server_s = rate;
  }
  return LoadOf(config, work);
}

}  // namespace wattcut::polca
