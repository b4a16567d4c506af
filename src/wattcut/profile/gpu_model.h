// Built-in GPU models: how the time and power of a training computation change with the SM
// frequency, fitted to the Perseus (SOSP '24) measured stage profiles by
// scripts/calibrate_gpu_models.py. They stand in for a GPU wherever none is present: the
// modelled demo profile, the simulated GPU backend, the emulator.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/profile/instruction.h"
#include "wattcut/profile/profile.h"

namespace wattcut {

// Relative time and power as a function of the SM frequency, both 1 at the model's fmax:
//   time(f)/time(fmax)   = time_a + (1 - time_a) * (time_knee / min(f, time_knee))^time_b
//   power(f)/power(fmax) = power_p0 + (1 - power_p0) * (min(f, power_knee) / power_knee)^power_g
// Flat above the knees: near fmax the measured GPUs are power-capped and gain nothing.
struct FrequencyCurve {
  double time_a = 0;
  double time_b = 1;
  double time_knee_mhz = 0;
  double power_p0 = 0;
  double power_g = 1;
  double power_knee_mhz = 0;

  double RelativeTime(int freq_mhz) const;
  double RelativePower(int freq_mhz) const;
};

// One computation of the reference workload at fmax.
struct WorkloadPoint {
  double time_s = 0;
  double power_w = 0;
};

struct StageWorkload {
  WorkloadPoint forward;
  WorkloadPoint backward;
  const WorkloadPoint& of(InstructionKind kind) const { return kind == InstructionKind::kForward ? forward : backward; }
};

struct GpuModel {
  std::string name;  // "a100-sxm", "a40"
  int max_freq_mhz = 0;
  int min_freq_mhz = 0;
  int freq_step_mhz = 0;
  double p2p_power_w = 0;         // power while blocked on pipeline communication
  double tdp_w = 0;               // board power limit (nominal, from the data sheet)
  double idle_power_w = 0;        // power with no work (nominal)
  FrequencyCurve curve;           // GPU-wide: fitted on forward and backward together
  FrequencyCurve forward_curve;   // fitted on forward computations only
  FrequencyCurve backward_curve;  // fitted on backward computations only
  // Reference workload the model was calibrated on (8 stages): a middle stage and the last one.
  std::string reference_workload;
  StageWorkload middle_stage;
  StageWorkload last_stage;

  // time(f)/time(fmax) >= 1 and power(f)/power(fmax), GPU-wide.
  double RelativeTime(int freq_mhz) const { return curve.RelativeTime(freq_mhz); }
  double RelativePower(int freq_mhz) const { return curve.RelativePower(freq_mhz); }
  // The same for one kind of computation (closer to the measurements).
  double RelativeTime(InstructionKind kind, int freq_mhz) const { return curve_of(kind).RelativeTime(freq_mhz); }
  double RelativePower(InstructionKind kind, int freq_mhz) const { return curve_of(kind).RelativePower(freq_mhz); }
  const FrequencyCurve& curve_of(InstructionKind kind) const {
    return kind == InstructionKind::kForward ? forward_curve : backward_curve;
  }
  // max_freq_mhz down to min_freq_mhz in freq_step_mhz.
  std::vector<int> SupportedFreqsMhz() const;
};

// The built-in model called `name`; the error lists the known names.
Result<const GpuModel*> FindGpuModel(std::string_view name);
std::vector<std::string> GpuModelNames();

// A realistic profile for num_stages stages: stages 0..S-2 run the middle-stage workload, stage
// S-1 the last-stage one; frequencies from max down to profile_floor_mhz (855 by default, where
// the measured profiles stop) in the model's step; time = base * RelativeTime(kind, f),
// energy = time * base power * RelativePower(kind, f). Measurements sorted by frequency, descending.
Profile MakeModelProfile(const GpuModel& model, int num_stages, int profile_floor_mhz = 855);

}  // namespace wattcut
