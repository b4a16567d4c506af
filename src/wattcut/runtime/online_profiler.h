// The online profiler: runs the job's own training iterations with every instruction of the rank
// locked to one SM frequency, sweeping from the highest frequency down, and measures each
// instruction's time (from the begin/end timestamps the training loop gives; the caller
// synchronises the device before each) and energy (the GPU energy counter, sampled by a
// background EnergySampler and interpolated at those timestamps). Warm-up iterations at each
// frequency are dropped. The result is the profile CSV the planner reads:
//   stage,instruction,frequency,time,energy,samples,time_std,energy_std
// (seconds, joules; samples = measured computations averaged; *_std = their standard deviation).
//
// Training loop:
//   while (!profiler.done()) {
//     profiler.BeginIteration();
//     for each instruction: profiler.InstructionBegin("forward"); run it; sync; profiler.InstructionEnd("forward");
//     profiler.EndIteration();
//   }
//   profiler.Finish(); profiler.WriteCsv(path);
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/clock.h"
#include "wattcut/base/result.h"
#include "wattcut/gpu/gpu_backend.h"
#include "wattcut/runtime/energy_sampler.h"
#include "wattcut/runtime/frequency_setter.h"

namespace wattcut {

struct OnlineProfilerOptions {
  int stage = 0;                     // written in the CSV's stage column
  int max_freq_mhz = 0;              // first frequency; 0: the GPU's highest supported
  int floor_mhz = 0;                 // lowest frequency; 0: the GPU's lowest supported
  int step_mhz = 0;                  // 0: every supported clock; else clocks max, max-step, ...
  int warmup_iterations = 1;         // dropped at each frequency
  int measured_iterations = 3;       // averaged at each frequency
  int stop_after_energy_rises = 0;   // stop when iteration energy rose this many frequencies in a row,
                                     // counted once it has fallen at least once (0: never)
  double sample_interval_s = 0.002;  // energy counter sampling period
};

struct ProfiledRow {
  int stage = 0;
  std::string instruction;
  int freq_mhz = 0;
  double time_s = 0;
  double energy_j = 0;
  int samples = 0;
  double time_std_s = 0;
  double energy_std_j = 0;
};

class OnlineProfiler {
 public:
  // Reads the GPU's supported SM clocks and plans the sweep; starts the energy sampler.
  // `backend`, `setter` and `clock` must outlive the profiler.
  static Result<std::unique_ptr<OnlineProfiler>> Start(GpuBackend& backend, int gpu, FrequencySetter& setter,
                                                       Clock& clock, const OnlineProfilerOptions& options);
  ~OnlineProfiler();

  // A failed BeginIteration (the clock not applied, the energy counter not read) changes nothing;
  // a failed EndIteration (the counter not read) does not count the iteration. Either way the
  // caller may begin the same iteration again.
  Status BeginIteration();
  Status InstructionBegin(std::string_view instruction);
  Status InstructionEnd(std::string_view instruction);
  Status EndIteration();

  bool done() const { return freq_index_ >= freqs_.size(); }
  // The frequency the next (or current) iteration runs at; 0 when done.
  int current_freq_mhz() const { return done() ? 0 : freqs_[freq_index_]; }
  const std::vector<int>& planned_freqs_mhz() const { return freqs_; }
  const std::vector<ProfiledRow>& rows() const { return rows_; }

  // Stops the sampler. Clocks are reset by the FrequencySetter's Stop().
  void Finish();
  std::string ToCsv() const;
  Status WriteCsv(const std::string& path) const;

 private:
  struct Span {
    std::string instruction;
    double begin_s = 0;
    double end_s = 0;
  };
  struct Series {
    std::string instruction;
    std::vector<double> times_s;
    std::vector<double> energies_j;
  };
  OnlineProfiler(GpuBackend& backend, int gpu, FrequencySetter& setter, Clock& clock, OnlineProfilerOptions options,
                 std::vector<int> freqs);
  void CloseFrequency();

  GpuBackend& backend_;
  const int gpu_;
  FrequencySetter& setter_;
  Clock& clock_;
  const OnlineProfilerOptions options_;
  std::vector<int> freqs_;
  size_t freq_index_ = 0;
  int iteration_at_freq_ = 0;
  bool in_iteration_ = false;
  bool in_instruction_ = false;
  std::vector<Span> spans_;
  std::vector<Series> series_;
  std::vector<ProfiledRow> rows_;
  double previous_iteration_energy_j_ = -1;
  int energy_rises_ = 0;
  bool energy_fell_ = false;
  EnergySampler sampler_;
};

}  // namespace wattcut
