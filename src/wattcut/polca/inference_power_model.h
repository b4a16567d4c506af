// Power and duration of LLM inference phases on one server, as functions of the work
// (prompt tokens, decode batch) and the locked SM clock. Pure functions of the config:
//
//   GPU power at clock f:   P(f) = idle + (P(f_max) - idle) * (f / f_max)^gamma_phase
//   phase time at clock f:  T(f) = T(f_max) * ((1 - c_phase) + c_phase * f_max / f)
//
// The prompt phase is close to compute-bound (c ~ 0.9) and draws at or above TDP; the
// token phase is mostly memory-bound (c ~ 0.25) and draws a lower plateau that grows
// with batch size. A GPU power cap is modelled as the highest clock whose phase power
// fits under the cap.
#pragma once

#include "wattcut/polca/polca_config.h"

namespace wattcut::polca {

class InferencePowerModel {
 public:
  explicit InferencePowerModel(const PolcaConfig& config);

  double max_freq_mhz() const { return gpu_.max_freq_mhz; }

  // Per GPU, watts.
  double GpuIdleW() const { return gpu_.idle_w; }
  double GpuPromptW(double prompt_tokens, double freq_mhz) const;
  double GpuTokenW(int batch, double freq_mhz) const;

  // Whole server, watts: other_idle_w + gpus * gpu_w * (1 + other_w_per_gpu_w).
  double ServerW(double gpu_w) const;
  // The inverse: one GPU's watts in a server drawing server_w.
  double GpuW(double server_w) const;
  double ServerIdleW() const;
  double ServerPromptW(double prompt_tokens, double freq_mhz) const;
  double ServerTokenW(int batch, double freq_mhz) const;

  // Durations at max clock, seconds.
  double PromptSeconds(double prompt_tokens) const;
  double TokenIterationSeconds(int batch) const;
  // Multipliers >= 1 on those durations at clock f.
  double PromptSlowdown(double freq_mhz) const;
  double TokenSlowdown(double freq_mhz) const;

  // The clock a GPU runs a phase at under a power cap (<= f_max, >= min clock).
  double PromptFreqUnderCap(double prompt_tokens, double cap_w) const;
  double TokenFreqUnderCap(int batch, double cap_w) const;

 private:
  GpuSpec gpu_;
  ServerSpec server_;
  ServiceSpec service_;
};

}  // namespace wattcut::polca
