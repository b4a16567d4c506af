#include "wattcut/runtime/online_profiler.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include "wattcut/base/general_text.h"

namespace wattcut {
namespace {

double Mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double StdDev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double mean = Mean(v);
  double sum = 0;
  for (double x : v) sum += (x - mean) * (x - mean);
  return std::sqrt(sum / static_cast<double>(v.size() - 1));
}

}  // namespace

OnlineProfiler::OnlineProfiler(GpuBackend& backend, int gpu, FrequencySetter& setter, Clock& clock,
                               OnlineProfilerOptions options, std::vector<int> freqs)
    : backend_(backend),
      gpu_(gpu),
      setter_(setter),
      clock_(clock),
      options_(options),
      freqs_(std::move(freqs)),
      sampler_(backend, gpu, clock, options.sample_interval_s) {}

OnlineProfiler::~OnlineProfiler() { Finish(); }

Result<std::unique_ptr<OnlineProfiler>> OnlineProfiler::Start(GpuBackend& backend, int gpu, FrequencySetter& setter,
                                                              Clock& clock, const OnlineProfilerOptions& options) {
  if (options.warmup_iterations < 0 || options.measured_iterations < 1) {
    return Error{"profiler: needs warmup_iterations >= 0 and measured_iterations >= 1"};
  }
  if (options.step_mhz < 0 || options.stop_after_energy_rises < 0 || options.sample_interval_s <= 0) {
    return Error{"profiler: step, stop-after and sample interval must not be negative"};
  }
  auto supported = SupportedSmClocksMhz(backend, gpu);
  if (!supported.ok()) return supported.error();
  if (supported->empty()) return Error{"profiler: GPU " + std::to_string(gpu) + " reports no SM clocks"};
  const int top = options.max_freq_mhz > 0 ? options.max_freq_mhz : supported->front();
  const int floor = options.floor_mhz > 0 ? options.floor_mhz : supported->back();
  std::vector<int> freqs;
  for (int f : *supported) {
    if (f > top || f < floor) continue;
    if (options.step_mhz > 0 && (top - f) % options.step_mhz != 0) continue;
    freqs.push_back(f);
  }
  if (freqs.empty()) {
    return Error{"profiler: no supported SM clock between " + std::to_string(floor) + " and " + std::to_string(top) +
                 " MHz" + (options.step_mhz > 0 ? " in steps of " + std::to_string(options.step_mhz) + " MHz" : "")};
  }
  std::unique_ptr<OnlineProfiler> profiler(new OnlineProfiler(backend, gpu, setter, clock, options, std::move(freqs)));
  if (Status s = profiler->sampler_.Start(); !s.ok())
    return Error{"profiler: cannot read the energy counter: " + s.error().message};
  return profiler;
}

Status OnlineProfiler::BeginIteration() {
  if (done()) return Error{"profiler: the sweep is done; no more iterations to profile"};
  if (in_iteration_) return Error{"profiler: BeginIteration twice without EndIteration"};
  if (iteration_at_freq_ == 0) {
    setter_.SetFrequency(freqs_[freq_index_]);
    if (Status s = setter_.WaitUntilApplied(); !s.ok()) return Error{"profiler: " + s.error().message};
  }
  // The first sample before any state changes: a failed read leaves the iteration not begun.
  if (Status s = sampler_.SampleNow(); !s.ok()) return s;
  in_iteration_ = true;
  spans_.clear();
  return Status::Ok();
}

Status OnlineProfiler::InstructionBegin(std::string_view instruction) {
  if (!in_iteration_) return Error{"profiler: instruction '" + std::string(instruction) + "' outside an iteration"};
  if (in_instruction_) {
    return Error{"profiler: '" + std::string(instruction) + "' began before '" + spans_.back().instruction + "' ended"};
  }
  in_instruction_ = true;
  spans_.push_back({std::string(instruction), clock_.NowS(), 0});
  return Status::Ok();
}

Status OnlineProfiler::InstructionEnd(std::string_view instruction) {
  const double now = clock_.NowS();
  if (!in_instruction_ || spans_.back().instruction != instruction) {
    return Error{"profiler: '" + std::string(instruction) + "' ended but " +
                 (in_instruction_ ? "'" + spans_.back().instruction + "' is running" : std::string("none began"))};
  }
  in_instruction_ = false;
  spans_.back().end_s = now;
  return Status::Ok();
}

Status OnlineProfiler::EndIteration() {
  if (!in_iteration_) return Error{"profiler: EndIteration without BeginIteration"};
  if (in_instruction_) return Error{"profiler: the iteration ended inside '" + spans_.back().instruction + "'"};
  in_iteration_ = false;
  if (Status s = sampler_.SampleNow(); !s.ok()) return s;
  const bool measured = iteration_at_freq_ >= options_.warmup_iterations;
  ++iteration_at_freq_;
  if (measured) {
    for (const Span& span : spans_) {
      auto energy_mj = sampler_.EnergyBetweenMj(span.begin_s, span.end_s);
      if (!energy_mj.ok()) return Error{"profiler: " + energy_mj.error().message};
      auto it = std::find_if(series_.begin(), series_.end(),
                             [&](const Series& s) { return s.instruction == span.instruction; });
      if (it == series_.end()) it = series_.insert(series_.end(), Series{span.instruction, {}, {}});
      it->times_s.push_back(span.end_s - span.begin_s);
      it->energies_j.push_back(*energy_mj / 1000.0);
    }
  }
  if (!spans_.empty()) sampler_.DropBefore(spans_.back().end_s);
  if (iteration_at_freq_ >= options_.warmup_iterations + options_.measured_iterations) CloseFrequency();
  return Status::Ok();
}

void OnlineProfiler::CloseFrequency() {
  const int freq = freqs_[freq_index_];
  double iteration_energy_j = 0;
  for (const Series& s : series_) {
    rows_.push_back({.stage = options_.stage,
                     .instruction = s.instruction,
                     .freq_mhz = freq,
                     .time_s = Mean(s.times_s),
                     .energy_j = Mean(s.energies_j),
                     .samples = static_cast<int>(s.times_s.size()),
                     .time_std_s = StdDev(s.times_s),
                     .energy_std_j = StdDev(s.energies_j)});
    iteration_energy_j += std::accumulate(s.energies_j.begin(), s.energies_j.end(), 0.0);
  }
  iteration_energy_j /= options_.measured_iterations;
  series_.clear();
  iteration_at_freq_ = 0;
  ++freq_index_;
  // Rises count only once the energy has fallen somewhere: near the maximum frequency a
  // power-capped GPU's energy can creep up for a few steps before it starts to fall.
  if (previous_iteration_energy_j_ >= 0 && iteration_energy_j > previous_iteration_energy_j_) {
    if (energy_fell_) ++energy_rises_;
  } else {
    if (previous_iteration_energy_j_ >= 0) energy_fell_ = true;
    energy_rises_ = 0;
  }
  previous_iteration_energy_j_ = iteration_energy_j;
  if (options_.stop_after_energy_rises > 0 && energy_rises_ >= options_.stop_after_energy_rises) {
    freq_index_ = freqs_.size();  // done
  }
}

void OnlineProfiler::Finish() { sampler_.Stop(); }

std::string OnlineProfiler::ToCsv() const {
  std::string out = "stage,instruction,frequency,time,energy,samples,time_std,energy_std\n";
  for (const ProfiledRow& r : rows_) {
    out += std::to_string(r.stage) + ',' + r.instruction + ',' + std::to_string(r.freq_mhz) + ',' +
           GeneralText(r.time_s) + ',' + GeneralText(r.energy_j) + ',' + std::to_string(r.samples) + ',' +
           GeneralText(r.time_std_s) + ',' + GeneralText(r.energy_std_j) + '\n';
  }
  return out;
}

Status OnlineProfiler::WriteCsv(const std::string& path) const {
  std::ofstream out(path);
  if (!out) return Error{"profiler: cannot write " + path};
  out << ToCsv();
  out.close();
  if (!out) return Error{"profiler: error writing " + path};
  return Status::Ok();
}

}  // namespace wattcut
