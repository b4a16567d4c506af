// GET /: the server's status page, one self-contained HTML document (inline CSS and SVG, no
// script, no external asset; it works offline and prints). A pure function of the views
// below, which the registry fills under its locks (JobRegistry::StatusViews); every user
// string (job ids, job metadata, errors) is HTML-escaped here.
//
// Per job: its name (job_metadata) and id, its phase (PhaseText), its ranks, microbatches
// and schedule, its frontier as the plot library's chart (iteration time vs energy, the
// selected and deployed plans, T_min, T* and AllMax marked), the stragglers, and the energy
// saved so far against AllMax (energy_saving.h: the planner's estimate over the steps the
// ranks reported; not a measurement), and the GPU energy the nodes measured beside the
// planner's estimate of it (job_measured_energy.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wattcut/server/frontier_state.h"
#include "wattcut/server/http_api.h"

namespace wattcut::server {

// The most jobs the page shows (the most recently registered); the others are counted.
inline constexpr size_t kStatusPageMaxJobs = 20;
// The most frontier points a chart is drawn from (evenly spaced, both ends kept).
inline constexpr size_t kStatusChartMaxPoints = 400;

struct StatusPoint {
  size_t index = 0;  // on the frontier (0: the slowest point)
  double time_s = 0;
  double energy_j = 0;
};

struct StatusFrontierView {
  size_t num_points = 0;
  std::vector<StatusPoint> curve;            // at most kStatusChartMaxPoints, slowest first
  StatusPoint fastest;                       // T_min
  StatusPoint min_energy;                    // T*
  StatusPoint selected;                      // what the plan selection names
  std::optional<StatusPoint> non_straggler;  // the point non-straggler pipelines run, when some straggle
  std::optional<double> all_max_time_s;      // the AllMax point, when the profile gives it
  std::optional<double> all_max_energy_j;
  double compute_seconds = 0;
};

struct StatusStragglerView {
  int dp_rank = 0;
  StragglerReport::Kind kind = StragglerReport::Kind::kIterationTime;
  double value = 0;  // seconds or factor
};

struct StatusSavingView {
  bool all_max_known = false;  // the job's frontier has an AllMax point
  bool started = false;        // some rank reported a step
  int64_t counted_steps = 0;   // steps reported since the server started
  int64_t plan_steps = 0;      // of which under a plan
  double saved_j = 0;
  double step_saving_j = 0;  // what one step of the deployed target saves now
};

// The GPU energy the job's nodes measured (PUT /v1/jobs/{id}/measured-energy/{node}) and the
// planner's estimate of what the steps the ranks reported used.
struct StatusGpuEnergyView {
  size_t measured_nodes = 0;         // nodes that reported; 0: no measurement
  double measured_j = 0;             // over those nodes
  std::vector<std::string> sources;  // the reports' sources, each once, as sent
  int64_t estimated_steps = 0;       // steps the estimate covers
  double estimated_j = 0;
};

// The job's power target (PUT /v1/jobs/{id}/power_target), as GET answers it.
struct StatusPowerTargetView {
  std::string kind;  // "peak_1s" or "average"
  double target_per_gpu_w = 0;
  std::string reason;
  bool applied = false;  // the frontier is ready: the target is in the deployment
  size_t point = 0;      // when applied: the plan it gives
  double point_per_gpu_w = 0;
  bool met = false;
};

// The job's deadline schedule (PUT /v1/jobs/{id}/deadline_schedule), as GET answers it.
struct StatusDeadlineView {
  std::string deadline;  // ISO 8601, as given
  std::string objective;
  double iterations = 0;
  double done = 0, expected = 0;  // iterations, since the spec's from_step
  std::optional<size_t> point_now;
  double planned_so_far = 0, planned_total = 0;  // the objective's (cost, kg CO2 or kWh)
  std::string finish;                            // the schedule's expected finish
  int replans = 0;
  std::string error;  // a replan that could not meet the deadline
};

struct JobStatusView {
  std::string job_id;
  std::optional<std::string> name;  // job_metadata
  int pp_degree = 1;
  int dp_degree = 1;
  int tp_degree = 1;
  int world_size = 1;
  int ranks_registered = 0;
  int64_t rounds = 0;
  int num_microbatches = 0;  // 0: not set
  PipelineScheduleKind schedule = PipelineScheduleKind::k1F1B;
  int virtual_stages = 1;
  FrontierState frontier_state = FrontierState::kNone;
  std::string frontier_error;
  std::string profile_source;             // empty: no profile
  std::optional<int> profiling_freq_mhz;  // the server-run sweep's frequency, while it runs
  std::string deployment_mode;            // "plan", "all_max" or "none" (nothing deployed)
  uint64_t deployment_version = 0;
  int64_t job_step = 0;                        // the largest step a rank reported
  std::optional<StatusFrontierView> frontier;  // set when the frontier is ready
  std::vector<StatusStragglerView> stragglers;
  double straggler_time_s = 0;  // T' of the slowest straggler; 0 when none
  StatusSavingView saving;
  StatusGpuEnergyView gpu_energy;
  std::optional<StatusPowerTargetView> power_target;
  std::optional<StatusDeadlineView> deadline;
};

struct ServerStatusView {
  std::string version;
  double uptime_s = 0;
  size_t num_jobs = 0;  // all loaded jobs
  size_t num_quarantined = 0;
  std::vector<JobStatusView> jobs;  // the most recent ones, newest first
};

// "registering ranks (3 of 8)", "profiling at 1410 MHz", "computing the frontier",
// "planned", "frontier failed", "waiting for a profile".
std::string PhaseText(const JobStatusView& job);

// The frontier chart as inline SVG (no XML declaration), element ids prefixed by `id_prefix`
// so that several charts share a page.
std::string StatusFrontierChartSvg(const StatusFrontierView& frontier, const std::string& id_prefix);

// The whole page.
std::string StatusPageHtml(const ServerStatusView& view);

}  // namespace wattcut::server
