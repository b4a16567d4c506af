// `wattcut polca`: size an LLM inference row under a power budget with POLCA.
//   wattcut polca simulate --trace T.csv --servers 40 --added 30% --policy polca --duration 7d --out DIR
//   wattcut polca sweep    --trace T.csv --added 0:50:5 --out DIR
//                          [--policy polca,headroom,brake-only,uniform-cap,power-cap]   (the default)
//   wattcut polca config   [--gpu a100|h100|mi300x]   (prints a config file to start from)
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "wattcut/base/printable_text.h"

#include "wattcut/cli/command.h"
#include "wattcut/cli/duration_argument.h"
#include "wattcut/cli/output_directory.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/request_trace.h"
#include "wattcut/polca/row_charts.h"
#include "wattcut/polca/row_limits.h"
#include "wattcut/polca/row_load.h"
#include "wattcut/polca/row_simulator.h"
#include "wattcut/polca/row_sweep.h"
#include "wattcut/polca/run_report.h"
#include "wattcut/polca/time_of_day.h"
#include "wattcut/polca/trace_timeline.h"
#include "wattcut/polca/training_job.h"

namespace wattcut::cli {
namespace {

using namespace wattcut::polca;

struct PolcaArgs {
  std::string trace_path;
  std::string gpu = "a100";
  std::string config_path;
  std::optional<int> servers;  // baseline; unset: the config's
  std::string added = "0";
  std::string policy = "polca";
  std::optional<std::string> duration;  // unset: 7d, or the trace's span with --time-of-day trace
  std::string time_of_day = "cosine";
  uint64_t seed = 1;
  bool in_band = false;
  int jobs = 0;
  std::string out_dir;
  bool overwrite = false;
  // Training servers (docs/polca.md, "Training servers"): overrides of row.training_share and
  // training.profile, and how the policy acts on them (sweep: a list).
  std::optional<std::string> training_share;
  std::string training_profile;
  std::optional<std::string> training_control;
};

// "30%", "30" -> 30; nothing when the text is not a number (with or without a trailing %).
std::optional<double> PercentNumber(const std::string& text) {
  std::string t = text;
  if (!t.empty() && t.back() == '%') t.pop_back();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size()) return std::nullopt;
  return v;
}

// "30%", "30" -> 0.30; "-5" and more than kMaxAddedFraction are errors.
Result<double> ParsePercent(const std::string& text) {
  const std::optional<double> v = PercentNumber(text);
  if (!v || !std::isfinite(*v) || *v < 0) {
    return Error{"--added: expected a non-negative percentage like 30%, got '" + PrintableText(text) + "'"};
  }
  if (*v / 100 > kMaxAddedFraction) {
    return Error{"--added: at most 1000 % (ten times the baseline row), got '" + PrintableText(text) + "'"};
  }
  return *v / 100;
}

// "30%" or "0:50:5" (from:to:step, in percent, inclusive) or "0,10,25".
Result<std::vector<double>> ParseAddedList(const std::string& text) {
  std::vector<double> out;
  if (text.find(':') != std::string::npos) {
    std::vector<std::string> parts;
    std::stringstream in(text);
    for (std::string p; std::getline(in, p, ':');) parts.push_back(p);
    if (parts.size() != 3) return Error{"--added: expected FROM:TO:STEP in percent, got '" + PrintableText(text) + "'"};
    Result<double> from = ParsePercent(parts[0]), to = ParsePercent(parts[1]), step = ParsePercent(parts[2]);
    if (!from.ok()) return from.error();
    if (!to.ok()) return to.error();
    if (!step.ok()) return step.error();
    if (*step <= 0 || *to < *from) {
      return Error{"--added: expected FROM <= TO and STEP > 0, got '" + PrintableText(text) + "'"};
    }
    // Counted before anything is stored: 0:1000:0.000001 is a billion values.
    const double count = std::floor((*to - *from) / *step + 1e-9) + 1;
    if (count > static_cast<double>(kMaxSweepRuns)) {
      return Error{"--added: '" + PrintableText(text) + "' is " + std::to_string(std::llround(count)) +
                   " values, more than the " + std::to_string(kMaxSweepRuns) + " runs a sweep may have"};
    }
    for (int i = 0; i < static_cast<int>(count); ++i) out.push_back(*from + i * *step);
    return out;
  }
  std::stringstream in(text);
  for (std::string p; std::getline(in, p, ',');) {
    if (out.size() == static_cast<size_t>(kMaxSweepRuns)) {
      return Error{"--added: more than the " + std::to_string(kMaxSweepRuns) + " values a sweep may have"};
    }
    Result<double> v = ParsePercent(p);
    if (!v.ok()) return v.error();
    out.push_back(*v);
  }
  return out;
}

Result<std::vector<PolicyKind>> ParsePolicies(const std::string& text) {
  std::vector<PolicyKind> out;
  std::stringstream in(text);
  for (std::string p; std::getline(in, p, ',');) {
    Result<PolicyKind> k = ParsePolicyKind(p);
    if (!k.ok()) return k.error();
    out.push_back(*k);
  }
  if (out.empty()) return Error{"--policy: expected at least one policy"};
  return out;
}

Result<std::vector<TrainingControl>> ParseTrainingControls(const std::string& text) {
  std::vector<TrainingControl> out;
  std::stringstream in(text);
  for (std::string p; std::getline(in, p, ',');) {
    Result<TrainingControl> c = ParseTrainingControl(p);
    if (!c.ok()) return Error{"--training-control: " + c.error().message};
    if (std::find(out.begin(), out.end(), *c) == out.end()) out.push_back(*c);
  }
  if (out.empty()) return Error{"--training-control: expected locks, power-target or both (locks,power-target)"};
  return out;
}

Result<PolcaConfig> LoadConfig(const PolcaArgs& args) {
  if (args.servers) {
    if (Status s = CheckRowSize(*args.servers, "--servers"); !s.ok()) return s.error();
  }
  Result<PolcaConfig> config = args.config_path.empty() ? BuiltInConfig(args.gpu) : ReadConfigFile(args.config_path);
  if (!config.ok()) return config;
  if (args.servers) config->row.baseline_servers = *args.servers;
  if (args.training_share) {
    const std::optional<double> v = PercentNumber(*args.training_share);
    if (!v || !(*v >= 0 && *v < 100)) {
      return Error{
          "--training-share: expected a percentage of the row's servers from 0 % to below 100 %, like 25%, "
          "got '" +
          PrintableText(*args.training_share) + "'"};
    }
    config->row.training_share = *v / 100;
  }
  if (!args.training_profile.empty()) {
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(args.training_profile, ec);
    config->training.profile = ec ? args.training_profile : absolute.lexically_normal().string();
  }
  if (args.in_band) config->control.actuation_latency_s = 0.01;
  Status valid = Validate(*config);
  if (!valid.ok()) return valid.error();
  return config;
}

std::string CommandLine(const std::string& sub, const PolcaArgs& a) {
  std::string s = "wattcut polca " + sub + " --trace " + a.trace_path;
  s += a.config_path.empty() ? " --gpu " + a.gpu : " --config " + a.config_path;
  if (a.servers) s += " --servers " + std::to_string(*a.servers);
  s += " --added " + a.added + " --policy " + a.policy;
  if (a.duration || a.time_of_day != "trace") s += " --duration " + a.duration.value_or("7d");
  if (a.time_of_day != "cosine") s += " --time-of-day " + a.time_of_day;
  s += " --seed " + std::to_string(a.seed);
  if (a.in_band) s += " --in-band";
  if (a.training_share) s += " --training-share " + *a.training_share;
  if (!a.training_profile.empty()) s += " --training-profile " + a.training_profile;
  if (a.training_control) s += " --training-control " + *a.training_control;
  return s + " --out " + a.out_dir;
}

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The trace as the run's time of day reads it: whole, to be expanded over the cosine envelope
// (cosine), or its timeline from one streamed pass, to be streamed again by every run (trace).
struct LoadedTrace {
  TimeOfDay mode = TimeOfDay::kCosine;
  std::optional<RequestTrace> trace;
  std::optional<TraceTimeline> timeline;
  double duration_s = 0;  // of every run

  Status Check(const PolcaConfig& config, const RowRunOptions& options) const {
    return timeline ? CheckRowRun(config, *timeline, options) : CheckRowRun(config, *trace, options);
  }
  Result<RowRunResult> Simulate(const PolcaConfig& config, const RowRunOptions& options) const {
    return timeline ? SimulateRow(config, *timeline, options) : SimulateRow(config, *trace, options);
  }
  // The requests that state the load: the whole trace (cosine) or its busiest hour (trace).
  TraceWork Work() const { return timeline ? WorkOf(*timeline) : WorkOf(*trace); }
  Result<SweepResult> Sweep(const PolcaConfig& config, const SweepOptions& options,
                            const std::function<void(const std::string&)>& progress) const {
    return timeline ? RunSweep(config, *timeline, options, progress) : RunSweep(config, *trace, options, progress);
  }
  RunContext Context(std::string command, const PolcaConfig& config, uint64_t seed, double wall_s,
                     const TrainingJob* job) const {
    RunContext context{std::move(command), &config, trace ? &*trace : nullptr, seed, wall_s, job};
    context.time_of_day = mode;
    context.timeline = timeline ? &*timeline : nullptr;
    return context;
  }
};

// Reads --trace for --time-of-day and sets the runs' duration: --duration (7d unless given), or
// with trace the trace's span unless --duration is given.
Result<LoadedTrace> LoadTrace(const PolcaArgs& args) {
  LoadedTrace loaded;
  Result<TimeOfDay> mode = ParseTimeOfDay(args.time_of_day);
  if (!mode.ok()) return mode.error();
  loaded.mode = *mode;
  std::optional<double> duration;
  if (args.duration || loaded.mode == TimeOfDay::kCosine) {
    Result<double> d = ParseDuration(args.duration.value_or("7d"));
    if (!d.ok()) return d.error();
    duration = *d;
  }
  if (loaded.mode == TimeOfDay::kCosine) {
    Result<RequestTrace> trace = RequestTrace::Read(args.trace_path);
    if (!trace.ok()) return trace.error();
    loaded.trace = std::move(*trace);
    loaded.duration_s = *duration;
    return loaded;
  }
  Result<TraceTimeline> timeline = TraceTimeline::Scan(args.trace_path);
  if (!timeline.ok()) return timeline.error();
  loaded.timeline = std::move(*timeline);
  // A --duration longer than the trace is refused by CheckRowRun.
  const double span_s = loaded.timeline->duration_s();
  loaded.duration_s = duration.value_or(std::min(span_s, kMaxDurationS));
  return loaded;
}

// The training job when the row trains (its frontier computed once, shared by every run), and
// the controls to run; an error for --training-control on a row without training servers.
struct TrainingSetup {
  std::optional<TrainingJob> job;
  std::vector<TrainingControl> controls = {TrainingControl::kLocks};
};

// Warnings about the job go to stderr at once, before anything is simulated.
Result<TrainingSetup> LoadTraining(const std::string& name, const PolcaArgs& args, const PolcaConfig& config,
                                   const std::string& default_controls, bool one_control) {
  TrainingSetup setup;
  if (config.row.training_share == 0) {
    if (args.training_control) {
      return Error{"--training-control: the row has no training servers (set --training-share or row.training_share)"};
    }
    if (!args.training_profile.empty()) {
      return Error{"--training-profile: the row has no training servers (set --training-share or row.training_share)"};
    }
    return setup;
  }
  Result<std::vector<TrainingControl>> controls =
      ParseTrainingControls(args.training_control ? *args.training_control : default_controls);
  if (!controls.ok()) return controls.error();
  setup.controls = *controls;
  if (one_control && setup.controls.size() != 1) {
    return Error{"--training-control: simulate runs one (locks or power-target); sweep runs both"};
  }
  Result<TrainingJob> job = BuildTrainingJob(config);
  if (!job.ok()) return job.error();
  for (const std::string& warning : job->warnings) ReportWarning(name, warning);
  setup.job = std::move(*job);
  return setup;
}

void PrintTrainingJob(const TrainingJob& job) {
  std::printf("training job: %s; AllMax %.3f s per iteration, %.0f W per server, peak %.0f W per GPU\n",
              job.description.c_str(), job.all_max.iteration_s(), job.all_max.average_server_w(),
              job.all_max.peak_power_per_gpu_w);
  for (size_t k = 0; k < job.targets_w.size(); ++k) {
    const TrainingTimeline& plan = job.plans[job.target_plan[k]];
    std::printf("  target %.0f W per GPU: %s, peak %.1f W per GPU, slowdown %.4f%s\n", job.targets_w[k],
                plan.name.c_str(), plan.peak_power_per_gpu_w, plan.iteration_s() / job.all_max.iteration_s(),
                job.target_met[k] ? "" : " (not met: the lowest-peak plan)");
  }
}

// workload.peak_utilization, when set, states the load by work: the rate it asks for with this
// trace's requests goes into `config`. Prints the load in both terms either way.
Status ResolveAndPrintLoad(PolcaConfig& config, const LoadedTrace& trace) {
  Result<RowLoad> load = ResolveRowLoad(config, trace.Work());
  if (!load.ok()) return load.error();
  std::printf(
      "load at the peak: %.4g requests/s per serving server, %.1f %% of a server's capacity (%.3g s of work "
      "per request at full batch)%s\n",
      load->peak_requests_per_server_s, 100 * load->peak_utilization, load->mean_request_work_s,
      load->stated_by_work ? ", from workload.peak_utilization" : "");
  return Status::Ok();
}

int RunSimulate(const PolcaArgs& args) {
  const std::string name = "polca simulate";
  // The output location first: a bad --out fails before anything is read or computed.
  Result<OutputDirectory> out = OutputDirectory::Create(args.out_dir, args.overwrite);
  if (!out.ok()) return ReportError(name, out.error());
  Result<PolcaConfig> config = LoadConfig(args);
  if (!config.ok()) return ReportError(name, config.error());
  Result<double> added = ParsePercent(args.added);
  if (!added.ok()) return ReportError(name, added.error());
  Result<PolicyKind> policy = ParsePolicyKind(args.policy);
  if (!policy.ok()) return ReportError(name, policy.error());
  Result<LoadedTrace> trace = LoadTrace(args);
  if (!trace.ok()) return ReportError(name, trace.error());
  const double* duration = &trace->duration_s;
  if (Status s = ResolveAndPrintLoad(*config, *trace); !s.ok()) return ReportError(name, s.error());

  Result<TrainingSetup> training = LoadTraining(name, args, *config, "locks", true);
  if (!training.ok()) return ReportError(name, training.error());

  RowRunOptions options;
  options.policy = *policy;
  options.servers = ServersFor(config->row.baseline_servers, *added);
  options.duration_s = *duration;
  options.seed = args.seed;
  options.training_job = training->job ? &*training->job : nullptr;
  options.training_control = training->controls.front();
  if (Status s = trace->Check(*config, options); !s.ok()) return ReportError(name, s.error());
  auto start = std::chrono::steady_clock::now();
  Result<RowRunResult> run = trace->Simulate(*config, options);
  if (!run.ok()) return ReportError(name, run.error());
  RowRunOptions reference_options = options;
  reference_options.policy = PolicyKind::kNone;
  reference_options.training_control = TrainingControl::kLocks;  // the unmanaged job: AllMax
  Result<RowRunResult> reference = trace->Simulate(*config, reference_options);
  if (!reference.ok()) return ReportError(name, reference.error());
  double wall = Since(start);

  RunContext context = trace->Context(CommandLine("simulate", args), *config, args.seed, wall, options.training_job);
  Status st = WriteRunReport(out->StagingPath("").string(), context, *run, *reference);
  if (st.ok()) st = out->Commit();
  if (!st.ok()) return ReportError(name, st.error());
  RunImpact impact = CompareRuns(*run, *reference);
  std::printf("%s, %d servers (%d + %.0f %%), %.1f days: %d brake events, peak %.1f %% of budget\n",
              PolicyName(*policy).c_str(), run->servers, config->row.baseline_servers, 100 * *added, *duration / 86400,
              run->brake_events, 100 * run->power_max);
  std::printf("latency impact P50/P99: high %+.2f %% / %+.2f %%, low %+.2f %% / %+.2f %%; SLOs %s\n",
              100 * impact.high.p50_latency, 100 * impact.high.p99_latency, 100 * impact.low.p50_latency,
              100 * impact.low.p99_latency, SloVerdictText(impact).c_str());
  if (training->job) {
    PrintTrainingJob(*training->job);
    std::printf("training (%s): %d servers, throughput %+.2f %% against the unmanaged job (AllMax, no policy)\n",
                TrainingControlName(run->training_control).c_str(), run->training.servers,
                100 * impact.training_throughput);
  }
  std::printf("simulated %.0f s in %.1f s wall (%.0f simulated s per wall s, two runs); wrote %s\n", 2 * *duration,
              wall, 2 * *duration / wall, DisplayPath(args.out_dir).c_str());
  return 0;
}

int RunSweepCommand(const PolcaArgs& args) {
  const std::string name = "polca sweep";
  Result<OutputDirectory> out = OutputDirectory::Create(args.out_dir, args.overwrite);
  if (!out.ok()) return ReportError(name, out.error());
  Result<PolcaConfig> config = LoadConfig(args);
  if (!config.ok()) return ReportError(name, config.error());
  Result<std::vector<double>> added = ParseAddedList(args.added);
  if (!added.ok()) return ReportError(name, added.error());
  Result<std::vector<PolicyKind>> policies = ParsePolicies(args.policy);
  if (!policies.ok()) return ReportError(name, policies.error());
  if (Status s = CheckSweepSize(added->size(), policies->size(), args.jobs); !s.ok())
    return ReportError(name, s.error());
  Result<LoadedTrace> trace = LoadTrace(args);
  if (!trace.ok()) return ReportError(name, trace.error());
  const double* duration = &trace->duration_s;
  if (Status s = ResolveAndPrintLoad(*config, *trace); !s.ok()) return ReportError(name, s.error());
  Result<TrainingSetup> training = LoadTraining(name, args, *config, "locks,power-target", false);
  if (!training.ok()) return ReportError(name, training.error());
  if (Status s = CheckSweepSize(added->size(), policies->size() * training->controls.size(), args.jobs); !s.ok())
    return ReportError(name, s.error());

  SweepOptions options;
  options.added_fractions = *added;
  options.policies = *policies;
  options.training_controls = training->controls;
  options.training_job = training->job ? &*training->job : nullptr;
  options.duration_s = *duration;
  options.seed = args.seed;
  options.jobs =
      args.jobs > 0
          ? args.jobs
          : static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, static_cast<unsigned>(kMaxSweepJobs)));
  // Every run's bounds before the first starts: the largest row is the most demanding.
  RowRunOptions largest;
  largest.servers = ServersFor(config->row.baseline_servers, *std::max_element(added->begin(), added->end()));
  largest.duration_s = *duration;
  if (Status s = trace->Check(*config, largest); !s.ok()) return ReportError(name, s.error());
  auto start = std::chrono::steady_clock::now();
  Result<SweepResult> sweep =
      trace->Sweep(*config, options, [](const std::string& line) { std::cerr << "  " << line << "\n"; });
  if (!sweep.ok()) return ReportError(name, sweep.error());
  double wall = Since(start);
  RunContext context = trace->Context(CommandLine("sweep", args), *config, args.seed, wall, options.training_job);
  Status st = WriteSweepReport(out->StagingPath("").string(), context, *sweep);
  if (st.ok()) st = out->Commit();
  if (!st.ok()) return ReportError(name, st.error());
  if (training->job) PrintTrainingJob(*training->job);
  std::cout << SweepMarkdown(*sweep);
  const std::vector<std::string> labels = SweepPolicyNames(*sweep);
  for (size_t i = 0; i < labels.size() && i < sweep->max_added_held.size(); ++i) {
    double held = sweep->max_added_held[i];
    std::printf(
        "%s holds %s\n", labels[i].c_str(),
        held < 0 ? "no point of the sweep" : ("up to +" + std::to_string(std::lround(100 * held)) + " %").c_str());
  }
  std::printf("simulated %.0f s in %.1f s wall (%.0f simulated s per wall s); wrote %s\n", sweep->simulated_s, wall,
              sweep->simulated_s / wall, DisplayPath(args.out_dir).c_str());
  return 0;
}

void AddCommonOptions(CLI::App* sub, PolcaArgs* args) {
  sub->add_option("--trace", args->trace_path,
                  "Request trace CSV (TIMESTAMP,ContextTokens,GeneratedTokens; Azure 2023 or 2024 timestamps)")
      ->required();
  sub->add_option("--gpu", args->gpu, "Built-in config when no --config is given: a100, h100 or mi300x")
      ->capture_default_str();
  sub->add_option("--config", args->config_path, "Config file (see `wattcut polca config`)");
  sub->add_option("--servers", args->servers,
                  "Servers the row budget was provisioned for, 1 to 10000 (default: config's, 40)");
  sub->add_option("--duration", args->duration,
                  "Simulated time with a unit: 7d, 36h, 90m, 600s (1 s to 90 d; default 7d, or the trace's span "
                  "with --time-of-day trace)");
  sub->add_option("--time-of-day", args->time_of_day,
                  "cosine: one trace hour over a diurnal cosine envelope; trace: a long trace (the Azure 2024 week) "
                  "streamed on its own timeline, its busiest hour at workload.peak_requests_per_server_s")
      ->capture_default_str();
  sub->add_option("--seed", args->seed, "Seed of the arrival expansion")->capture_default_str();
  sub->add_flag("--in-band", args->in_band, "In-band (NVML, 10 ms) clock control instead of out-of-band (40 s)");
  sub->add_option("--training-share", args->training_share,
                  "Servers that train instead of serving, e.g. 25% (default: row.training_share, 0)");
  sub->add_option("--training-profile", args->training_profile,
                  "Stage profile CSV of the training job (default: training.profile)");
  sub->add_option("--out", args->out_dir, "Output directory")->required();
  sub->add_flag("--overwrite", args->overwrite, "Replace DIR if it exists and is not empty");
}

}  // namespace

void AddPolcaCommand(CLI::App& app, CommandStatus& status) {
  CLI::App* polca = app.add_subcommand("polca", "Size an LLM inference row under its power budget (POLCA)");
  polca->require_subcommand(1);

  auto simulate_args = std::make_shared<PolcaArgs>();
  CLI::App* simulate = polca->add_subcommand("simulate", "Simulate one row under one policy");
  AddCommonOptions(simulate, simulate_args.get());
  simulate->add_option("--added", simulate_args->added, "Servers added beyond --servers, e.g. 30%")
      ->capture_default_str();
  simulate->add_option("--policy", simulate_args->policy, "polca, headroom, brake-only, uniform-cap, power-cap or none")
      ->capture_default_str();
  simulate->add_option("--training-control", simulate_args->training_control,
                       "How the policy acts on training servers: locks (as low priority) or power-target "
                       "(default: locks)");
  simulate->callback([simulate_args, &status] { status.exit_code = RunSimulate(*simulate_args); });

  auto sweep_args = std::make_shared<PolcaArgs>();
  sweep_args->added = "0:50:5";
  sweep_args->policy = "polca,headroom,brake-only,uniform-cap,power-cap";
  CLI::App* sweep = polca->add_subcommand("sweep", "Sweep added servers x policies to size the row");
  AddCommonOptions(sweep, sweep_args.get());
  sweep->add_option("--added", sweep_args->added, "Added servers in percent: FROM:TO:STEP or a list (0,10,30)")
      ->capture_default_str();
  sweep->add_option("--policy", sweep_args->policy, "Comma-separated policies")->capture_default_str();
  sweep->add_option("--jobs", sweep_args->jobs, "Runs in parallel (default: one per CPU)");
  sweep->add_option("--training-control", sweep_args->training_control,
                    "locks, power-target or both, each policy run with each (default: locks,power-target)");
  sweep->callback([sweep_args, &status] { status.exit_code = RunSweepCommand(*sweep_args); });

  auto config_gpu = std::make_shared<std::string>("a100");
  AddPolcaControlCommand(*polca, status);
  AddPolcaReplayCommand(*polca, status);
  AddPolcaAuditCommand(*polca, status);
  AddPolcaCalibrateCommand(*polca, status);
  AddPolcaSynthesizeCommand(*polca, status);

  CLI::App* config = polca->add_subcommand("config", "Print a built-in config to start your own from");
  config->add_option("--gpu", *config_gpu, "a100, h100 or mi300x")->capture_default_str();
  config->callback([config_gpu, &status] {
    Result<PolcaConfig> c = BuiltInConfig(*config_gpu);
    if (!c.ok()) {
      status.exit_code = ReportError("polca config", c.error());
      return;
    }
    std::cout << FormatConfig(*c);
  });
}

}  // namespace wattcut::cli
