// `wattcut gpu`: look at and control the GPUs through a backend (NVML, simulated, or the node agent:
// `wattcut gpu --agent SOCKET ...`, or $WATTCUT_AGENT_SOCKET; every subcommand but profile works through it).
//   list   GPUs, clocks, power limits, power and the energy counter
//   lock   lock SM clocks (and optionally the memory clock to max, a power limit), confirming the change;
//          every argument is checked against every selected GPU first, and a step that still fails
//          undoes the steps already applied. --hold keeps the lock until SIGINT/SIGTERM, --for SECONDS
//          that long, then undoes it. Through an agent the lock is the lease's and ends with this
//          process, so a lock without --hold or --for is refused there
//   reset  undo locks (SM and memory clocks; the power limit with --power-limit)
//   watch  power, SM clock and energy over time (like nvidia-smi dmon)
//   check  read-only check of the NVML backend with a verdict; setters run in dry-run only (gpu/backend_check.h)
//   profile  the online profiler on simulated GPUs running a model workload: a profile CSV for the planner
//            (runtime/simulated_pipeline_profiling.h)
// The lock itself (plan, apply, roll back) is gpu/clock_lock_plan.h; this file reads the flags and prints.
#include <signal.h>
#include <time.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "wattcut/base/clock.h"
#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/general_text.h"
#include "wattcut/cli/command.h"
#include "wattcut/gpu/agent_backend.h"
#include "wattcut/gpu/backend_check.h"
#include "wattcut/gpu/clock_lock_plan.h"
#include "wattcut/gpu/dry_run_backend.h"
#include "wattcut/gpu/open_backend.h"
#include "wattcut/runtime/simulated_pipeline_profiling.h"

namespace wattcut::cli {
namespace {

struct GpuArgs {
  BackendOptions backend;
  std::string agent;  // --agent (on `gpu` itself)
  std::string agent_token_file;
  int gpu = -1;  // -1: all
  // lock
  int sm_mhz = 0;
  int sm_max_mhz = 0;
  bool memory_max = false;
  std::optional<double> power_limit_w;
  bool hold = false;
  std::optional<double> for_s;
  // reset
  bool reset_power_limit = false;
  bool keep_memory = false;
  // watch / check
  double interval_s = 1.0;
  int count = 0;
  double duration_s = 5.0;
  // profile
  int stages = 8;
  int microbatches = 4;
  OnlineProfilerOptions profiler;
  std::string out_path;
};

// The GPUs a command acts on: --gpu, or all of them.
Result<std::vector<int>> Targets(GpuBackend& backend, int gpu) {
  auto count = backend.DeviceCount();
  if (!count.ok()) return count.error();
  if (gpu >= 0) {
    if (Status s = CheckGpuIndex(gpu, *count); !s.ok()) return s.error();
    return std::vector<int>{gpu};
  }
  std::vector<int> all;
  for (int i = 0; i < *count; ++i) all.push_back(i);
  return all;
}

// The backend the flags name, and the GPUs the command acts on.
struct SelectedGpus {
  std::unique_ptr<GpuBackend> backend;
  std::vector<int> gpus;
};

Result<SelectedGpus> OpenSelectedGpus(const GpuArgs& args) {
  auto backend = OpenBackend(args.backend);
  if (!backend.ok()) return backend.error();
  auto targets = Targets(**backend, args.gpu);
  if (!targets.ok()) return targets.error();
  return SelectedGpus{std::move(*backend), std::move(*targets)};
}

std::string ReadOr(const Result<int64_t>& value, double scale, int digits, const std::string& unit) {
  return value.ok() ? FixedDecimals(static_cast<double>(*value) * scale, digits) + " " + unit
                    : "n/a (" + value.error().message + ")";
}

int List(const GpuArgs& args) {
  const std::string name = "gpu list";
  auto selected = OpenSelectedGpus(args);
  if (!selected.ok()) return ReportError(name, selected.error());
  GpuBackend& b = *selected->backend;
  const std::vector<int>& targets = selected->gpus;
  std::cout << "backend: " << b.name() << "\n";
  for (int gpu : targets) {
    auto info = b.Info(gpu);
    if (!info.ok()) return ReportError(name, info.error());
    std::cout << "GPU " << gpu << ": " << info->name << " (" << info->uuid << ")\n";
    auto memory = b.SupportedMemoryClocksMhz(gpu);
    std::cout << "  memory clocks: " << (memory.ok() ? ClockRangeText(*memory) : memory.error().message) << "\n";
    auto sm = SupportedSmClocksMhz(b, gpu);
    std::cout << "  SM clocks at max memory clock: " << (sm.ok() ? ClockRangeText(*sm) : sm.error().message) << "\n";
    auto clock = b.SmClockMhz(gpu);
    std::cout << "  SM clock now: " << (clock.ok() ? std::to_string(*clock) + " MHz" : clock.error().message) << "\n";
    auto limits = b.PowerLimits(gpu);
    std::cout << "  power limit: "
              << (limits.ok() ? ReadOr(b.PowerLimitMw(gpu), 1e-3, 0, "W") + " now, default " +
                                    FixedDecimals(limits->default_mw / 1000.0, 0) + " W, range " +
                                    FixedDecimals(limits->min_mw / 1000.0, 0) + "-" +
                                    FixedDecimals(limits->max_mw / 1000.0, 0) + " W"
                              : limits.error().message)
              << "\n";
    std::cout << "  power now: " << ReadOr(b.PowerUsageMw(gpu), 1e-3, 1, "W") << "\n";
    std::cout << "  energy counter: " << ReadOr(b.TotalEnergyMj(gpu), 1e-3, 3, "J") << "\n";
  }
  return 0;
}

// The command line's own checks of the lock flags (the library checks the request it becomes too,
// naming its fields); every problem found, joined.
Status CheckLockFlags(const GpuArgs& args) {
  std::vector<std::string> problems;
  const int max_mhz = args.sm_max_mhz > 0 ? args.sm_max_mhz : args.sm_mhz;
  if (args.sm_mhz < 0 || args.sm_max_mhz < 0) problems.push_back("--sm and --sm-max must be positive MHz");
  if (args.sm_max_mhz > 0 && args.sm_mhz <= 0) problems.push_back("--sm-max needs --sm (the lower bound)");
  if (args.sm_mhz > 0 && max_mhz < args.sm_mhz) {
    problems.push_back("--sm-max " + std::to_string(max_mhz) + " is below --sm " + std::to_string(args.sm_mhz));
  }
  // Checked before converting: a NaN or 1e300 W has no milliwatt value.
  if (args.power_limit_w &&
      !(std::isfinite(*args.power_limit_w) && *args.power_limit_w > 0 && *args.power_limit_w < 1e6)) {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%g", *args.power_limit_w);
    problems.push_back(std::string("--power-limit: expected a positive number of watts below 1000000, got ") + shown);
  }
  if (problems.empty()) return Status::Ok();
  std::string all = problems.front();
  for (size_t i = 1; i < problems.size(); ++i) all += "; " + problems[i];
  return Error{all};
}

// "(SM clock was B MHz, reads A MHz now)", '?' for a reading that failed.
std::string ClockChange(const std::optional<int>& before, const std::optional<int>& after) {
  return "(SM clock was " + (before ? std::to_string(*before) : std::string("?")) + " MHz, reads " +
         (after ? std::to_string(*after) : std::string("?")) + " MHz now)";
}

std::optional<int> Reading(const Result<int>& value) { return value.ok() ? std::optional<int>(*value) : std::nullopt; }

// SIGINT and SIGTERM, blocked in every thread (the mask is inherited: block before any starts) so
// that the hold below takes them with sigtimedwait instead of dying with the lock in place.
class HeldSignals {
 public:
  HeldSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, &previous_);
  }
  ~HeldSignals() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  HeldSignals(const HeldSignals&) = delete;
  HeldSignals& operator=(const HeldSignals&) = delete;

  // Waits for SIGINT or SIGTERM, at most `limit_s` (none: forever). The signal's name, or "" when
  // the time ran out.
  std::string Wait(std::optional<double> limit_s) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                              std::chrono::duration<double>(limit_s.value_or(0)));
    for (;;) {
      int signal = -1;
      if (!limit_s) {
        signal = sigwaitinfo(&set_, nullptr);
      } else {
        const auto left = until - std::chrono::steady_clock::now();
        if (left <= std::chrono::nanoseconds(0)) return "";
        const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(left);
        timespec timeout{
            static_cast<time_t>(seconds.count()),
            static_cast<long>(std::chrono::duration_cast<std::chrono::nanoseconds>(left - seconds).count())};
        signal = sigtimedwait(&set_, nullptr, &timeout);
        if (signal < 0 && errno == EAGAIN) return "";
      }
      if (signal == SIGINT) return "SIGINT";
      if (signal == SIGTERM) return "SIGTERM";
    }
  }

 private:
  sigset_t set_;
  sigset_t previous_;
};

// The agent under `backend` (through a dry run too), or null.
AgentBackend* AgentOf(GpuBackend& backend) {
  if (auto* agent = dynamic_cast<AgentBackend*>(&backend)) return agent;
  if (auto* dry = dynamic_cast<DryRunBackend*>(&backend)) return dynamic_cast<AgentBackend*>(&dry->inner());
  return nullptr;
}

// The command line's checks of --hold and --for.
Status CheckHoldFlags(const GpuArgs& args) {
  if (args.hold && args.for_s) return Error{"give --hold (until a signal) or --for SECONDS, not both"};
  if (args.for_s && !(std::isfinite(*args.for_s) && *args.for_s > 0 && *args.for_s <= 1e7)) {
    return Error{"--for: expected a number of seconds in (0, 10000000]"};
  }
  if (args.backend.kind == "agent" && !args.hold && !args.for_s && !args.backend.dry_run) {
    return Error{
        "through an agent a lock lasts only as long as this command: the lock belongs to this process's "
        "lease, and the agent ends the lease and resets the clocks when the process exits. Add --hold "
        "(keep the lock until Ctrl-C or SIGTERM) or --for SECONDS"};
  }
  return Status::Ok();
}

int Lock(const GpuArgs& args) {
  const std::string name = "gpu lock";
  if (args.sm_mhz <= 0 && args.sm_max_mhz <= 0 && !args.memory_max && !args.power_limit_w) {
    return ReportError(name, Error{"nothing to lock: give --sm MHZ, --memory-max and/or --power-limit W"});
  }
  if (Status s = CheckHoldFlags(args); !s.ok()) return ReportError(name, s.error());
  const bool holds = args.hold || args.for_s.has_value();
  std::optional<HeldSignals> signals;
  if (holds) signals.emplace();  // before the backend starts any thread
  auto selected = OpenSelectedGpus(args);
  if (!selected.ok()) return ReportError(name, selected.error());
  if (Status s = CheckLockFlags(args); !s.ok()) return ReportError(name, s.error());
  ClockLockRequest request;
  request.sm_min_mhz = args.sm_mhz;
  request.sm_max_mhz = args.sm_mhz > 0 ? (args.sm_max_mhz > 0 ? args.sm_max_mhz : args.sm_mhz) : 0;
  request.memory_max = args.memory_max;
  request.power_limit_w = args.power_limit_w;
  GpuBackend& b = *selected->backend;
  auto plans = PlanClockLock(b, selected->gpus, request);
  if (!plans.ok()) return ReportError(name, plans.error());
  const bool dry = args.backend.dry_run;
  // Through an agent, every GPU is leased before anything changes: a GPU another process holds
  // stops the lock here, naming that process.
  if (AgentBackend* agent = AgentOf(b); agent != nullptr && !dry) {
    if (Status s = agent->LeaseGpus(selected->gpus); !s.ok()) return ReportError(name, s.error());
  }

  std::vector<ClockLockChange> changes;
  Status applied = ApplyClockLock(b, *plans, [&](const ClockLockChange& change) {
    changes.push_back(change);
    std::cout << "GPU " << change.gpu << ": ";
    switch (change.kind) {
      case ClockLockChange::kSmClocks:
        std::cout << (dry ? "would lock" : "locked") << " SM clocks to " << change.sm_min_mhz << "-"
                  << change.sm_max_mhz << " MHz " << ClockChange(change.sm_clock_before_mhz, change.sm_clock_after_mhz)
                  << "\n";
        break;
      case ClockLockChange::kMemoryClocks:
        std::cout << (dry ? "would lock" : "locked") << " the memory clock to its maximum, " << change.memory_mhz
                  << " MHz\n";
        break;
      case ClockLockChange::kPowerLimit:
        std::cout << (dry ? "would set" : "set") << " the power limit to "
                  << FixedDecimals(change.power_limit_mw / 1000.0, 1) << " W\n";
        break;
    }
  });
  if (!applied.ok()) return ReportError(name, applied.error());
  if (dry) std::cout << "dry run: nothing changed\n";
  if (!holds) return 0;
  if (args.for_s) {
    std::cout << "holding the lock for " << GeneralText(*args.for_s) << " s (or until SIGINT or SIGTERM)\n";
  } else {
    std::cout << "holding the lock until SIGINT or SIGTERM (Ctrl-C)\n";
  }
  std::cout.flush();
  const std::string signal = signals->Wait(args.for_s);
  std::cout << (signal.empty() ? std::string("time is up") : signal) << ": "
            << (dry ? std::string("dry run: nothing to undo") : RollBackClockLock(b, changes)) << "\n";
  return 0;
}

int Reset(const GpuArgs& args) {
  const std::string name = "gpu reset";
  auto selected = OpenSelectedGpus(args);
  if (!selected.ok()) return ReportError(name, selected.error());
  GpuBackend& b = *selected->backend;
  const std::vector<int>& targets = selected->gpus;
  const bool dry = args.backend.dry_run;
  for (int gpu : targets) {
    const std::string who = "GPU " + std::to_string(gpu) + ": ";
    const std::optional<int> before = Reading(b.SmClockMhz(gpu));
    if (Status s = b.ResetGpuClocks(gpu); !s.ok()) return ReportError(name, s.error());
    const std::optional<int> after = Reading(b.SmClockMhz(gpu));
    std::cout << who << (dry ? "would reset" : "reset") << " SM clocks " << ClockChange(before, after) << "\n";
    if (!args.keep_memory) {
      if (Status s = b.ResetMemoryClocks(gpu); !s.ok()) return ReportError(name, s.error());
      std::cout << who << (dry ? "would reset" : "reset") << " memory clocks\n";
    }
    if (args.reset_power_limit) {
      auto limits = b.PowerLimits(gpu);
      if (!limits.ok()) return ReportError(name, limits.error());
      if (Status s = b.SetPowerLimitMw(gpu, limits->default_mw); !s.ok()) return ReportError(name, s.error());
      std::cout << who << (dry ? "would reset" : "reset") << " the power limit to its default, "
                << FixedDecimals(limits->default_mw / 1000.0, 1) << " W\n";
    }
  }
  if (dry) std::cout << "dry run: nothing changed\n";
  return 0;
}

int Watch(const GpuArgs& args) {
  const std::string name = "gpu watch";
  if (args.interval_s <= 0) return ReportError(name, Error{"--interval must be positive"});
  auto selected = OpenSelectedGpus(args);
  if (!selected.ok()) return ReportError(name, selected.error());
  GpuBackend& b = *selected->backend;
  const std::vector<int>& targets = selected->gpus;
  std::cout << "# time_s gpu power_w sm_mhz energy_j\n";
  const auto start = std::chrono::steady_clock::now();
  for (int n = 0; args.count <= 0 || n < args.count; ++n) {
    if (n > 0) {
      std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                std::chrono::duration<double>(n * args.interval_s)));
    }
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (int gpu : targets) {
      auto power = b.PowerUsageMw(gpu);
      auto clock = b.SmClockMhz(gpu);
      auto energy = b.TotalEnergyMj(gpu);
      if (!power.ok()) return ReportError(name, power.error());
      std::cout << FixedDecimals(t, 2) << " " << gpu << " " << FixedDecimals(*power / 1000.0, 1) << " "
                << (clock.ok() ? std::to_string(*clock) : "-") << " "
                << (energy.ok() ? FixedDecimals(*energy / 1000.0, 3) : "-") << "\n";
    }
    std::cout.flush();
  }
  return 0;
}

// Read-only check: every setter goes through a DryRunBackend, whatever the flags say.
int Check(const GpuArgs& args) {
  if (!(args.duration_s >= 0 && std::isfinite(args.duration_s))) {
    return ReportError("gpu check", Error{"--duration must be a number of seconds >= 0"});
  }
  BackendCheckOptions options;
  options.gpu = args.gpu;
  options.duration_s = args.duration_s;
  options.on_result = [](const CheckResult& result) {
    std::cout << "[" << CheckOutcomeName(result.outcome) << "] "
              << (result.gpu >= 0 ? "GPU " + std::to_string(result.gpu) + ": " : std::string()) << result.detail
              << "\n";
  };
  SteadyClock clock;
  const BackendCheckReport report = CheckGpuBackend(args.backend, clock, options);
  std::cout << "VERDICT: " << report.summary << "\n";
  switch (report.verdict) {
    case CheckVerdict::kPass:
      return 0;
    case CheckVerdict::kFail:
      return 1;
    case CheckVerdict::kNoGpu:
      return 2;
  }
  return 1;
}

// Every stage of a pipeline on its own simulated GPU, profiled by the online profiler.
int Profile(const GpuArgs& args) {
  const std::string name = "gpu profile";
  if (args.backend.kind != "simulated") {
    return ReportError(name, Error{"only --backend simulated: on real GPUs the profiler runs inside the training job "
                                   "(wattcut::OnlineProfiler, see docs/gpu.md)"});
  }
  if (args.stages < 1 || args.microbatches < 1)
    return ReportError(name, Error{"--stages and --microbatches must be >= 1"});
  SimulatedPipelineProfilingOptions options;
  options.gpu_model = args.backend.simulated_model;
  options.stages = args.stages;
  options.microbatches = args.microbatches;
  options.profiler = args.profiler;
  auto profile = ProfileSimulatedPipeline(options, [](const ProfiledStageSummary& stage) {
    std::cerr << "stage " << stage.stage << ": " << stage.frequencies << " frequencies profiled, "
              << FixedDecimals(stage.simulated_time_s, 1) << " s of simulated GPU time\n";
  });
  if (!profile.ok()) return ReportError(name, profile.error());
  if (args.out_path.empty() || args.out_path == "-") {
    std::cout << profile->csv;
    return 0;
  }
  std::ofstream out(args.out_path);
  out << profile->csv;
  out.close();
  if (!out) return ReportError(name, Error{"cannot write " + args.out_path});
  std::cerr << "wrote " << args.out_path << "\n";
  return 0;
}

// --agent (or $WATTCUT_AGENT_SOCKET when --backend is not given) makes the backend the node agent.
Status ResolveAgent(GpuArgs& args, const CLI::App* sub) {
  const bool backend_given = sub->count("--backend") > 0;
  std::string agent = args.agent;
  if (!agent.empty() && backend_given) return Error{"give --agent or --backend, not both"};
  if (agent.empty() && !backend_given) {
    const char* from_environment = std::getenv(kAgentSocketVariable);
    if (from_environment != nullptr) agent = from_environment;
  }
  if (agent.empty()) {
    if (!args.agent_token_file.empty()) return Error{"--agent-token-file needs --agent"};
    return Status::Ok();
  }
  args.backend.kind = "agent";
  args.backend.agent = agent;
  args.backend.agent_token_file = args.agent_token_file;
  return Status::Ok();
}

// A subcommand's callback that can work through the agent: resolves it first.
std::function<void()> ThroughAgent(const std::shared_ptr<GpuArgs>& args, CLI::App* sub, const std::string& name,
                                   CommandStatus& status, int (*run)(const GpuArgs&)) {
  return [args, sub, name, &status, run] {
    if (Status s = ResolveAgent(*args, sub); !s.ok()) {
      status.exit_code = ReportError(name, s.error());
      return;
    }
    status.exit_code = run(*args);
  };
}

void AddBackendOptions(CLI::App* sub, GpuArgs& args, bool allow_dry_run) {
  sub->add_option("--backend", args.backend.kind,
                  "GPU backend: nvml (NVIDIA GPUs), rocm-smi (AMD GPUs) or simulated (built-in GPU models)")
      ->check(CLI::IsMember({"nvml", "rocm-smi", "simulated"}))
      ->capture_default_str();
  if (allow_dry_run) sub->add_flag("--dry-run", args.backend.dry_run, "Setters only print what they would do");
  sub->add_option("--nvml-library", args.backend.nvml_library, "NVML library to load")->capture_default_str();
  sub->add_option("--rocm-smi-library", args.backend.rocm_smi_library,
                  "ROCm SMI library to load (ROCm's own: /opt/rocm/lib/librocm_smi64.so.1)")
      ->capture_default_str();
  sub->add_option("--model", args.backend.simulated_model, "GPU model of the simulated backend: a100-sxm or a40")
      ->capture_default_str();
  sub->add_option("--gpus", args.backend.simulated_gpus, "Number of simulated GPUs")->capture_default_str();
  sub->add_option("--gpu", args.gpu, "GPU index (default: all)");
}

}  // namespace

void AddGpuCommand(CLI::App& app, CommandStatus& status) {
  auto args = std::make_shared<GpuArgs>();
  CLI::App* gpu = app.add_subcommand("gpu", "Look at and control GPUs: list, lock, reset, watch, check");
  gpu->require_subcommand(1);
  gpu->fallthrough();  // `gpu list --agent S` as well as `gpu --agent S list`
  gpu->add_option("--agent", args->agent,
                  "Work through the node agent (`wattcut agent`) on this socket, or at this http:// URL "
                  "(default: $WATTCUT_AGENT_SOCKET when --backend is not given)");
  gpu->add_option("--agent-token-file", args->agent_token_file,
                  "File holding the agent's bearer token ('TOKEN' or 'SCOPE TOKEN'): for TCP");

  CLI::App* list = gpu->add_subcommand("list", "GPUs, supported clocks, power limits, power and energy counter");
  AddBackendOptions(list, *args, true);
  list->callback(ThroughAgent(args, list, "gpu list", status, List));

  CLI::App* lock =
      gpu->add_subcommand("lock", "Lock SM clocks (on real GPUs: root, CAP_SYS_ADMIN, or --agent with --hold/--for)");
  AddBackendOptions(lock, *args, true);
  lock->add_option("--sm", args->sm_mhz, "SM clock to lock to, MHz (the lower bound with --sm-max)");
  lock->add_option("--sm-max", args->sm_max_mhz, "Upper bound of the SM clock range, MHz (default: --sm)");
  lock->add_flag("--memory-max", args->memory_max, "Also lock the memory clock to its maximum");
  lock->add_option("--power-limit", args->power_limit_w, "Also set the power limit, W");
  lock->add_flag("--hold", args->hold, "Keep the lock until SIGINT or SIGTERM (Ctrl-C), then undo it");
  lock->add_option("--for", args->for_s, "Keep the lock this many seconds (or until SIGINT/SIGTERM), then undo it");
  lock->callback(ThroughAgent(args, lock, "gpu lock", status, Lock));

  CLI::App* reset = gpu->add_subcommand("reset", "Reset SM and memory clocks (and the power limit with --power-limit)");
  AddBackendOptions(reset, *args, true);
  reset->add_flag("--power-limit", args->reset_power_limit, "Also reset the power limit to its default");
  reset->add_flag("--keep-memory", args->keep_memory, "Leave the memory clock locked");
  reset->callback(ThroughAgent(args, reset, "gpu reset", status, Reset));

  CLI::App* watch = gpu->add_subcommand("watch", "Print power, SM clock and energy every interval");
  AddBackendOptions(watch, *args, false);
  watch->add_option("--interval", args->interval_s, "Seconds between samples")->capture_default_str();
  watch->add_option("--count", args->count, "Number of samples (default: until interrupted)");
  watch->callback(ThroughAgent(args, watch, "gpu watch", status, Watch));

  CLI::App* check = gpu->add_subcommand(
      "check", "Read-only check of the GPU backend with a verdict (setters in dry-run only; changes nothing)");
  AddBackendOptions(check, *args, false);
  check->add_option("--duration", args->duration_s, "Seconds of power and energy sampling")->capture_default_str();
  check->callback(ThroughAgent(args, check, "gpu check", status, Check));

  CLI::App* profile = gpu->add_subcommand(
      "profile",
      "Run the online profiler on simulated GPUs (one per stage) and write the profile CSV the planner reads");
  args->profiler.floor_mhz = 855;
  AddBackendOptions(profile, *args, false);
  profile->add_option("--stages", args->stages, "Pipeline stages (the last runs the model's last-stage workload)")
      ->capture_default_str();
  profile->add_option("--microbatches", args->microbatches, "Forwards and backwards per profiled iteration")
      ->capture_default_str();
  profile->add_option("--max-freq", args->profiler.max_freq_mhz, "First frequency, MHz (default: the GPU's highest)");
  profile->add_option("--floor", args->profiler.floor_mhz, "Lowest frequency, MHz")->capture_default_str();
  profile->add_option("--step", args->profiler.step_mhz, "Frequency step, MHz (default: every supported clock)");
  profile->add_option("--warmup", args->profiler.warmup_iterations, "Warm-up iterations dropped per frequency")
      ->capture_default_str();
  profile->add_option("--iterations", args->profiler.measured_iterations, "Measured iterations per frequency")
      ->capture_default_str();
  profile
      ->add_option("--stop-after-rises", args->profiler.stop_after_energy_rises,
                   "Stop after iteration energy rose this many frequencies in a row (0: never)")
      ->capture_default_str();
  profile->add_option("--out", args->out_path, "Output CSV (default: stdout)");
  profile->callback([args, profile, &status] {
    if (!args->agent.empty()) {
      status.exit_code =
          ReportError("gpu profile", Error{"--agent does not apply: the profiler runs on simulated GPUs"});
      return;
    }
    if (profile->count("--backend") == 0) args->backend.kind = "simulated";
    status.exit_code = Profile(*args);
  });
}

}  // namespace wattcut::cli
