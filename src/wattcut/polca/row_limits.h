// The bounds of what the POLCA simulator accepts, all in one place, each with its reason
// (docs/polca.md, "Limits", lists them for users). Everything the simulator allocates grows
// with one of these quantities, so each is checked before anything is allocated: a run
// that would exhaust memory or take days is refused at once with a message that names the
// bound, instead of ending in std::bad_alloc or std::system_error.
//
// Who checks what:
//   * polca_config's Validate(): the config keys bounded here (row size, batch, prefill,
//     telemetry period, per-server request rate);
//   * RequestTrace: the trace file's size, request count and time span; RequestTraceReader the
//     same for a streamed trace (--time-of-day trace), with its own bounds;
//   * CheckRowRun(), called by SimulateRow() and by `wattcut polca` before it computes:
//     the run as a whole (servers, duration, telemetry readings, replayed requests);
//   * CheckSweepSize(), called by RunSweep() and by `wattcut polca sweep`.
#pragma once

#include <cstddef>
#include <cstdint>

#include "wattcut/base/result.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/request_trace.h"

namespace wattcut::polca {

struct RowRunOptions;
struct TraceTimeline;

// Servers in one row, baseline or after adding. 10,000 DGX-class servers draw about 65 MW, a
// whole datacenter (POLCA's rows hold tens of servers; `polca sweep` sizes a data hall of
// thousands as one row); a bigger number is a typing mistake. Each server holds a few hundred
// bytes of state plus its requests; a day of 2,560 servers runs in about a minute (BM_RowDay).
inline constexpr int kMaxServersPerRow = 10000;
// One server's power (a reading, a provisioned power): a typing-mistake guard, 1 MW is far
// above any server (a DGX H100 is about 10 kW).
inline constexpr double kMaxServerPowerW = 1e6;
// A row's budget (row.budget_w): 1 GW, a whole campus, is far above any row (2,000 servers of
// 10 kW are 20 MW); a larger one, or a fraction of a watt, is a mistake.
inline constexpr double kMaxRowBudgetW = 1e9;
// Added servers, as a fraction of the baseline: 10 = +1000 %, far past where any policy
// holds (POLCA's result is +30 %); also keeps the added row within kMaxServersPerRow.
inline constexpr double kMaxAddedFraction = 10;

// Simulated time of one run. At least one second (the default telemetry period: a shorter
// run has no reading); at most 90 days, more than twelve cycles of the weekly arrival
// envelope, after which a run only repeats the same week.
inline constexpr double kMinDurationS = 1;
inline constexpr double kMaxDurationS = 90 * 86400.0;

// Telemetry period (control.telemetry_period_s): from 10 ms, the fastest in-band NVML power
// reading, to one hour, longer than any control loop could use.
inline constexpr double kMinTelemetryPeriodS = 0.01;
inline constexpr double kMaxTelemetryPeriodS = 3600;
// A control latency (telemetry delay, actuation, brake, a power cap's or a training job's
// response): 10 minutes. The slowest real path, a BMC command out of band, takes about 40 s; a
// brake that lands 10 minutes after the reading that asked for it protects nothing.
inline constexpr double kMaxControlLatencyS = 600;
// Row power readings kept per run (duration / telemetry period), 4 bytes each: 50 million
// is 200 MB, e.g. 90 days at 0.16 s or 7 days at 12 ms.
inline constexpr int64_t kMaxPowerReadingsPerRun = 50'000'000;
// The headroom policy's forecast window (policy.headroom_window_s): up to ten minutes, and at
// most 6,000 readings, which it refits on every decision (a longer window follows the day, not
// the next actuation latency).
inline constexpr double kMaxHeadroomWindowS = 600;
inline constexpr int kMaxHeadroomWindowReadings = 6000;

// Arrival rate per server at the daily peak (workload.peak_requests_per_server_s). The
// A100 and H100 defaults are 0.7 and 2.0; an LLM replica serving 1,000 requests a second is
// beyond any model this simulator describes.
inline constexpr double kMaxRequestsPerServerS = 1000;
// Requests the arrival expansion replays in one run (before thinning to the diurnal rate).
// The run keeps 8 bytes per completed request (latency percentiles) and simulates about
// 1.5 million requests per wall second: 200 million is at most 1.6 GB and a few minutes,
// and covers the H100 defaults at +50 % for two weeks.
inline constexpr int64_t kMaxReplayedRequestsPerRun = 200'000'000;
// Requests replayed in one expansion block (the trace's span, at least an hour). The cosine
// expansion hands a block out in windows of a second or more, but holds a 40-byte run for each of its
// copies' stretches (at most one a replayed request: 20 million is 800 MB, reached only by a trace
// of one or two requests; the conversation trace's copies take kilobytes); --time-of-day trace
// holds its busiest hour at once as 24-byte arrivals (480 MB).
inline constexpr int64_t kMaxReplayedRequestsPerBlock = 20'000'000;

// Requests decoding together on one server (service.max_batch): vLLM's default is 256;
// 4,096 is sixteen times that. Each server holds two tables of max_batch + 1 entries.
inline constexpr int kMaxBatch = 4096;
// Prompt tokens batched into one prefill (service.max_prefill_tokens): 1,048,576 is the
// longest context window of current models.
inline constexpr int kMaxPrefillTokens = 1 << 20;

// The request trace. The Azure traces are one hour and about 20,000 requests (0.7 MB);
// a trace is replayed as the shape of every block, so one longer than a month is not what
// the expansion models, and 10 million requests (~400 MB of CSV) is 500 times the
// shipped trace.
inline constexpr double kMaxTraceSpanS = 31 * 86400.0;
// Context or generated tokens of one request: ten times the longest context window of
// current models, and far inside int32 even summed over a prefill.
inline constexpr int64_t kMaxTokensPerRequest = 10'000'000;
inline constexpr int64_t kMaxTraceRequests = 10'000'000;
inline constexpr uint64_t kMaxTraceFileBytes = uint64_t{512} << 20;

// A streamed trace (--time-of-day trace, request_trace_reader.h): read one request at a time in
// the memory of one 1 MiB chunk, on its own timeline, so its size bounds the time of a pass, not
// memory. The 2024 Azure traces are a week: about 17 million requests and 600 MB each.
//  * span: a run follows the trace's timeline and lasts at most kMaxDurationS, so a trace longer
//    than the longest run cannot be simulated to its end (90 days, not the 31 of a replayed one);
//  * requests: 250 million, 90 days at the 2024 traces' rate (17 million a week is 219 million);
//    a pass reads a few million a wall second, so about two minutes;
//  * file: 16 GiB, 250 million rows of the 2024 form (36 to 45 bytes) with room to spare.
inline constexpr double kMaxStreamedTraceSpanS = kMaxDurationS;
inline constexpr int64_t kMaxStreamedTraceRequests = 250'000'000;
inline constexpr uint64_t kMaxStreamedTraceFileBytes = uint64_t{16} << 30;
// A config file has about 50 keys (a few KB); a megabyte is certainly not one.
inline constexpr uint64_t kMaxConfigFileBytes = uint64_t{1} << 20;

// Runs in one sweep (added values x (policies + the unconstrained reference)); the
// README's full sweep is 11 x 5 = 55 runs.
// Training servers (training_job.h): the planner's own limits bound the frontier; these bound
// the events a training server makes (about 1 / timeline_step_s per second).
inline constexpr int kMaxTrainingMicrobatches = 4096;
inline constexpr double kMinTrainingTimelineStepS = 0.01;
inline constexpr double kMaxTrainingTimelineStepS = 60;
// Timeline steps of a run's training servers (servers x duration / step): about 7 million a wall
// second (190 training servers for 2 days, 131 million steps a run, 19 s), so 2 billion is about
// five minutes (a 7-day run of 13 servers at 0.25 s: 31 million).
inline constexpr int64_t kMaxTrainingStepsPerRun = 2'000'000'000;

inline constexpr int64_t kMaxSweepRuns = 1000;
// Threads of a sweep (--jobs): more threads than CPUs only adds memory (each holds a run).
inline constexpr int kMaxSweepJobs = 256;

// Fails when `servers` is outside [1, kMaxServersPerRow]; `what` names it in the message.
Status CheckRowSize(int servers, const char* what);
// Fails when `duration_s` is outside [kMinDurationS, kMaxDurationS].
Status CheckDuration(double duration_s);
// Upper bound of the requests the arrival expansion replays per block / per run.
double ReplayedRequestsPerBlock(const PolcaConfig& config, const RequestTrace& trace, int servers);
double ReplayedRequestsPerRun(const PolcaConfig& config, const RequestTrace& trace, int servers, double duration_s);
// The bounds of one run that do not depend on where its arrivals come from: row size, duration,
// telemetry readings, training timeline steps.
Status CheckRunShape(const PolcaConfig& config, const RowRunOptions& options);
// Every bound of one run: CheckRunShape and the requests the expansion of `trace` replays.
Status CheckRowRun(const PolcaConfig& config, const RequestTrace& trace, const RowRunOptions& options);
// Every bound of one run on a streamed trace's timeline (--time-of-day trace): CheckRunShape, a
// duration within the trace's, and the requests its scaling replays per hour and per run.
Status CheckRowRun(const PolcaConfig& config, const TraceTimeline& timeline, const RowRunOptions& options);
// A sweep of `added_values` x `policies` with `jobs` threads.
Status CheckSweepSize(size_t added_values, size_t policies, int jobs);

}  // namespace wattcut::polca
