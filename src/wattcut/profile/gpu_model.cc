#include "wattcut/profile/gpu_model.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "wattcut/base/printable_text.h"

namespace wattcut {

double FrequencyCurve::RelativeTime(int freq_mhz) const {
  const double f = std::min(static_cast<double>(freq_mhz), time_knee_mhz);
  return time_a + (1.0 - time_a) * std::pow(time_knee_mhz / f, time_b);
}

double FrequencyCurve::RelativePower(int freq_mhz) const {
  const double f = std::min(static_cast<double>(freq_mhz), power_knee_mhz);
  return power_p0 + (1.0 - power_p0) * std::pow(f / power_knee_mhz, power_g);
}

std::vector<int> GpuModel::SupportedFreqsMhz() const {
  std::vector<int> freqs;
  for (int f = max_freq_mhz; f >= min_freq_mhz; f -= freq_step_mhz) freqs.push_back(f);
  return freqs;
}

namespace {

// Curve parameters and reference workloads: output of scripts/calibrate_gpu_models.py on
// ../shared/data/perseus-sosp24/stage_profile (minimax fits; worst errors in the comments).
// TDP and idle power are nominal data-sheet figures, not fitted.
const std::array<GpuModel, 2>& BuiltinModels() {
  static const std::array<GpuModel, 2> models = {
      GpuModel{
          .name = "a100-sxm",
          .max_freq_mhz = 1410,
          .min_freq_mhz = 210,
          .freq_step_mhz = 15,
          .p2p_power_w = 83.64,
          .tdp_w = 500,  // the 500 W HGX configuration: the measured stages draw 460-480 W
          .idle_power_w = 55,
          // worst over all series: time 1.55 %, energy 2.40 %
          .curve = {.time_a = 0.527859,
                    .time_b = 1.563278,
                    .time_knee_mhz = 1386.310,
                    .power_p0 = 0.466560,
                    .power_g = 5.618929,
                    .power_knee_mhz = 1371.945},
          // worst: time 0.50 %, energy 1.76 %
          .forward_curve = {.time_a = 0.449342,
                            .time_b = 1.485796,
                            .time_knee_mhz = 1368.653,
                            .power_p0 = 0.454902,
                            .power_g = 5.428294,
                            .power_knee_mhz = 1365.638},
          // worst: time 0.54 %, energy 1.94 %
          .backward_curve = {.time_a = 0.515423,
                             .time_b = 1.536791,
                             .time_knee_mhz = 1371.296,
                             .power_p0 = 0.469594,
                             .power_g = 5.646602,
                             .power_knee_mhz = 1369.762},
          .reference_workload = "GPT-3 175B, bf16, 8 stages, A100 SXM",
          .middle_stage = {.forward = {0.05016166687011708, 474.5749789702813},
                           .backward = {0.092953779220581, 479.63889552247736}},
          .last_stage = {.forward = {0.05403325939178456, 460.1671935621542},
                         .backward = {0.0988586274782816, 469.4178260789096}},
      },
      GpuModel{
          .name = "a40",
          .max_freq_mhz = 1740,
          .min_freq_mhz = 210,
          .freq_step_mhz = 15,
          .p2p_power_w = 70.38,
          .tdp_w = 300,
          .idle_power_w = 30,
          // worst over all series: time 6.69 %, energy 5.98 %
          .curve = {.time_a = 0.951025,
                    .time_b = 2.880672,
                    .time_knee_mhz = 1740.000,
                    .power_p0 = 0.565971,
                    .power_g = 4.278210,
                    .power_knee_mhz = 1461.526},
          // worst: time 5.69 %, energy 4.99 % (the measured forward time drops by 10 % between
          // 1065 and 1050 MHz, which no smooth curve follows)
          .forward_curve = {.time_a = 0.317926,
                            .time_b = 0.405536,
                            .time_knee_mhz = 1733.939,
                            .power_p0 = 0.532984,
                            .power_g = 3.132294,
                            .power_knee_mhz = 1530.264},
          // worst: time 0.97 %, energy 2.42 %
          .backward_curve = {.time_a = 0.828325,
                             .time_b = 2.190653,
                             .time_knee_mhz = 1507.075,
                             .power_p0 = 0.542776,
                             .power_g = 3.942977,
                             .power_knee_mhz = 1489.026},
          .reference_workload = "Bloom 176B, bf16, 8 stages, A40",
          .middle_stage = {.forward = {0.13344467067718507, 293.27986499023535},
                           .backward = {0.248327154636383, 294.35875068204695}},
          .last_stage = {.forward = {0.11789055585861206, 293.8681537934353},
                         .backward = {0.2270188384056091, 294.2394449222444}},
      },
  };
  return models;
}

}  // namespace

Result<const GpuModel*> FindGpuModel(std::string_view name) {
  for (const GpuModel& model : BuiltinModels()) {
    if (model.name == name) return &model;
  }
  std::string known;
  for (const std::string& n : GpuModelNames()) known += (known.empty() ? "" : ", ") + n;
  return Error{"unknown GPU model '" + PrintableText(name) + "' (known: " + known + ")"};
}

std::vector<std::string> GpuModelNames() {
  std::vector<std::string> names;
  for (const GpuModel& model : BuiltinModels()) names.push_back(model.name);
  return names;
}

Profile MakeModelProfile(const GpuModel& model, int num_stages, int profile_floor_mhz) {
  Profile profile(num_stages);
  for (int stage = 0; stage < num_stages; ++stage) {
    const StageWorkload& workload = stage == num_stages - 1 ? model.last_stage : model.middle_stage;
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      const WorkloadPoint& base = workload.of(kind);
      std::vector<Measurement>& out = profile.mutable_measurements(stage, kind);
      for (int f : model.SupportedFreqsMhz()) {
        if (f < profile_floor_mhz) break;
        const double time_s = base.time_s * model.RelativeTime(kind, f);
        const double power_w = base.power_w * model.RelativePower(kind, f);
        out.push_back({.freq_mhz = f, .time_s = time_s, .energy_j = time_s * power_w});
      }
    }
  }
  return profile;
}

}  // namespace wattcut
