#include "wattcut/gpu/backend_check.h"

#include <algorithm>
#include <cmath>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/gpu/dry_run_backend.h"

namespace wattcut {
namespace {

// The counter's average power may differ from the mean power reading by this much (a reading is
// an instant, the counter integrates) before the check warns.
constexpr double kEnergyAgreementFraction = 0.25;
constexpr double kEnergyAgreementMinW = 10.0;

// Collects the results and hands each to the caller's observer as it is found.
class CheckRecorder {
 public:
  explicit CheckRecorder(const std::function<void(const CheckResult&)>& on_result) : on_result_(on_result) {}

  void Add(std::string name, int gpu, CheckOutcome outcome, std::string detail) {
    report_.results.push_back({std::move(name), gpu, outcome, std::move(detail)});
    if (on_result_) on_result_(report_.results.back());
  }
  BackendCheckReport Finish(CheckVerdict verdict, std::string summary) {
    report_.verdict = verdict;
    report_.summary = std::move(summary);
    return std::move(report_);
  }

 private:
  const std::function<void(const CheckResult&)>& on_result_;
  BackendCheckReport report_;
};

// Power readings every sample interval over the window, and the energy counter across it.
void CheckPowerAndEnergy(GpuBackend& b, int gpu, Clock& clock, const BackendCheckOptions& options,
                         CheckRecorder& recorder) {
  auto e0 = b.TotalEnergyMj(gpu);
  if (!e0.ok()) recorder.Add("energy counter", gpu, CheckOutcome::kFail, "energy counter: " + e0.error().message);
  const double start_s = clock.NowS();
  double power_sum_w = 0, power_max_w = 0, power_min_w = 1e18;
  int clock_max = 0, samples = 0;
  while (clock.NowS() - start_s < options.duration_s) {
    auto power = b.PowerUsageMw(gpu);
    auto sm_clock = b.SmClockMhz(gpu);
    if (!power.ok()) {
      recorder.Add("power", gpu, CheckOutcome::kFail, "power reading: " + power.error().message);
      return;
    }
    const double w = *power / 1000.0;
    power_sum_w += w;
    power_max_w = std::max(power_max_w, w);
    power_min_w = std::min(power_min_w, w);
    if (sm_clock.ok()) clock_max = std::max(clock_max, *sm_clock);
    ++samples;
    clock.SleepForS(options.sample_interval_s);
  }
  const double elapsed_s = clock.NowS() - start_s;
  auto e1 = b.TotalEnergyMj(gpu);
  if (samples == 0) return;
  const double mean_w = power_sum_w / samples;
  recorder.Add("power", gpu, CheckOutcome::kPass,
               "power over " + FixedDecimals(elapsed_s, 1) + " s: mean " + FixedDecimals(mean_w, 1) + " W, min " +
                   FixedDecimals(power_min_w, 1) + " W, max " + FixedDecimals(power_max_w, 1) +
                   " W; highest SM clock seen " + std::to_string(clock_max) + " MHz");
  if (!e0.ok() || !e1.ok()) return;
  const double energy_j = static_cast<double>(*e1 - *e0) / 1000.0;
  const double counter_w = energy_j / elapsed_s;
  const bool agrees = std::abs(counter_w - mean_w) <= std::max(kEnergyAgreementFraction * mean_w, kEnergyAgreementMinW);
  recorder.Add(
      "energy vs power", gpu, agrees ? CheckOutcome::kPass : CheckOutcome::kWarn,
      "energy counter advanced " + FixedDecimals(energy_j, 1) + " J = " + FixedDecimals(counter_w, 1) +
          " W on average" +
          (agrees ? ", agreeing with the power readings" : ", differing from the power readings by more than 25 %"));
}

// Every setter once, through the dry-run backend: it checks the arguments against the GPU and
// logs what it would do. `dry_lines` is that log.
void CheckSetters(DryRunBackend& b, int gpu, const Result<std::vector<int>>& sm, std::vector<std::string>& dry_lines,
                  CheckRecorder& recorder) {
  const size_t before = dry_lines.size();
  Status lock = sm.ok() && !sm->empty() ? b.LockGpuClocks(gpu, sm->back(), sm->back()) : Status(Error{"no SM clocks"});
  Status memory = LockMemoryClockToMax(b, gpu);
  Status reset = b.ResetGpuClocks(gpu);
  Status reset_memory = b.ResetMemoryClocks(gpu);
  auto limits = b.PowerLimits(gpu);
  Status limit = limits.ok() ? b.SetPowerLimitMw(gpu, limits->default_mw) : Status(limits.error());
  for (const Status* s : {&lock, &memory, &reset, &reset_memory, &limit}) {
    if (!s->ok()) recorder.Add("setter", gpu, CheckOutcome::kWarn, "dry-run setter: " + s->error().message);
  }
  for (size_t i = before; i < dry_lines.size(); ++i) recorder.Add("setter", gpu, CheckOutcome::kDryRun, dry_lines[i]);
}

void CheckGpu(DryRunBackend& b, int gpu, Clock& clock, const BackendCheckOptions& options,
              std::vector<std::string>& dry_lines, CheckRecorder& recorder) {
  auto info = b.Info(gpu);
  if (info.ok()) {
    recorder.Add("identity", gpu, CheckOutcome::kPass, info->name + " " + info->uuid);
  } else {
    recorder.Add("identity", gpu, CheckOutcome::kFail, info.error().message);
  }
  auto sm = SupportedSmClocksMhz(b, gpu);
  auto memory = MaxMemoryClockMhz(b, gpu);
  if (sm.ok() && !sm->empty() && memory.ok()) {
    recorder.Add("supported clocks", gpu, CheckOutcome::kPass,
                 "max memory clock " + std::to_string(*memory) + " MHz; SM clocks " + ClockRangeText(*sm));
  } else {
    recorder.Add(
        "supported clocks", gpu, CheckOutcome::kFail,
        "supported clocks: " + (sm.ok() ? (memory.ok() ? "empty list" : memory.error().message) : sm.error().message));
  }
  CheckPowerAndEnergy(b, gpu, clock, options, recorder);
  CheckSetters(b, gpu, sm, dry_lines, recorder);
}

}  // namespace

std::string_view CheckOutcomeName(CheckOutcome outcome) {
  switch (outcome) {
    case CheckOutcome::kPass:
      return "PASS";
    case CheckOutcome::kWarn:
      return "WARN";
    case CheckOutcome::kFail:
      return "FAIL";
    case CheckOutcome::kDryRun:
      return "DRY";
  }
  return "?";
}

int BackendCheckReport::Count(CheckOutcome outcome) const {
  return static_cast<int>(
      std::count_if(results.begin(), results.end(), [&](const CheckResult& r) { return r.outcome == outcome; }));
}

bool MeansNoGpu(const Error& open_error) {
  const std::string& m = open_error.message;
  for (const char* no_gpu : {"cannot load NVML", "sees no GPU", "DRIVER_NOT_LOADED",  // NVML
                             "cannot load ROCm SMI", "sees no AMD GPU", "found no usable amdgpu device"}) {
    if (m.find(no_gpu) != std::string::npos) return true;
  }
  return false;
}

BackendCheckReport CheckGpuBackend(std::unique_ptr<GpuBackend> backend, Clock& clock,
                                   const BackendCheckOptions& options) {
  CheckRecorder recorder(options.on_result);
  if (!(options.duration_s >= 0 && std::isfinite(options.duration_s)) ||
      !(options.sample_interval_s > 0 && std::isfinite(options.sample_interval_s))) {
    recorder.Add("options", -1, CheckOutcome::kFail,
                 "duration_s must be a number of seconds >= 0 and sample_interval_s one > 0");
    return recorder.Finish(CheckVerdict::kFail, "FAIL: the check's options are invalid");
  }
  if (backend == nullptr) {
    recorder.Add("open", -1, CheckOutcome::kFail, "no backend to check");
    return recorder.Finish(CheckVerdict::kFail, "FAIL: the backend does not open");
  }
  std::vector<std::string> dry_lines;
  DryRunBackend b(std::move(backend), [&](const std::string& line) { dry_lines.push_back(line); });
  auto count = b.DeviceCount();
  Status selected = count.ok() ? Status::Ok() : Status(count.error());
  if (selected.ok() && options.gpu >= 0) selected = CheckGpuIndex(options.gpu, *count);
  if (!selected.ok()) {
    recorder.Add("gpus", -1, CheckOutcome::kFail, selected.error().message);
    return recorder.Finish(CheckVerdict::kFail, "FAIL");
  }
  recorder.Add("discovery", -1, CheckOutcome::kPass,
               "backend " + b.inner().name() + " sees " + std::to_string(*count) + " GPU(s)");
  if (options.gpu >= 0) {
    CheckGpu(b, options.gpu, clock, options, dry_lines, recorder);
  } else {
    for (int gpu = 0; gpu < *count; ++gpu) CheckGpu(b, gpu, clock, options, dry_lines, recorder);
  }
  BackendCheckReport report = recorder.Finish(CheckVerdict::kPass, "");
  const int failures = report.Count(CheckOutcome::kFail);
  const int warnings = report.Count(CheckOutcome::kWarn);
  if (failures > 0) {
    report.verdict = CheckVerdict::kFail;
    report.summary = "FAIL: " + std::to_string(failures) + " check(s) failed (no GPU setting was changed)";
  } else {
    report.summary = "PASS" + (warnings > 0 ? " with " + std::to_string(warnings) + " warning(s)" : std::string()) +
                     ": the " + b.inner().name() +
                     " backend discovers, reads clocks, power and energy; setters were exercised in dry-run only "
                     "(no GPU setting was changed)";
  }
  return report;
}

BackendCheckReport CheckGpuBackend(const BackendOptions& open, Clock& clock, const BackendCheckOptions& options) {
  BackendOptions options_to_open = open;
  options_to_open.dry_run = false;
  auto opened = OpenBackend(options_to_open);
  if (opened.ok()) return CheckGpuBackend(std::move(opened).value(), clock, options);
  CheckRecorder recorder(options.on_result);
  recorder.Add("open", -1, CheckOutcome::kFail, "open the " + open.kind + " backend: " + opened.error().message);
  if (MeansNoGpu(opened.error())) {
    return recorder.Finish(CheckVerdict::kNoGpu,
                           "NO GPU: this machine has no usable NVIDIA GPU or driver; nothing to check");
  }
  return recorder.Finish(CheckVerdict::kFail, "FAIL: the backend does not open");
}

}  // namespace wattcut
