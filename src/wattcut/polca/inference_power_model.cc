#include "wattcut/polca/inference_power_model.h"

#include <algorithm>
#include <cmath>

namespace wattcut::polca {
namespace {

double Scale(double full_w, double idle_w, double freq_ratio, double exponent) {
  // pow(1, x) is exactly 1: skip the call at the (common) maximum clock.
  double factor = freq_ratio == 1.0 ? 1.0 : std::pow(freq_ratio, exponent);
  return idle_w + (full_w - idle_w) * factor;
}

// The clock at which idle + (full - idle) * (f / f_max)^exponent equals cap.
double FreqForCap(double full_w, double idle_w, double cap_w, double exponent, const GpuSpec& gpu) {
  if (full_w <= cap_w) return gpu.max_freq_mhz;
  if (cap_w <= idle_w || exponent <= 0) return gpu.min_freq_mhz;
  double ratio = std::pow((cap_w - idle_w) / (full_w - idle_w), 1.0 / exponent);
  return std::clamp(ratio * gpu.max_freq_mhz, gpu.min_freq_mhz, gpu.max_freq_mhz);
}

}  // namespace

InferencePowerModel::InferencePowerModel(const PolcaConfig& config)
    : gpu_(config.gpu), server_(config.server), service_(config.service) {}

double InferencePowerModel::GpuPromptW(double prompt_tokens, double freq_mhz) const {
  double share = std::clamp(prompt_tokens / gpu_.prompt_tokens_for_peak, 0.0, 1.0);
  double full = gpu_.prompt_w_small + (gpu_.prompt_w_large - gpu_.prompt_w_small) * share;
  return Scale(full, gpu_.idle_w, freq_mhz / gpu_.max_freq_mhz, gpu_.prompt_power_freq_exponent);
}

double InferencePowerModel::GpuTokenW(int batch, double freq_mhz) const {
  double share =
      service_.max_batch <= 1 ? 1.0 : std::clamp(static_cast<double>(batch - 1) / (service_.max_batch - 1), 0.0, 1.0);
  double full = gpu_.token_w_batch1 + (gpu_.token_w_full_batch - gpu_.token_w_batch1) * share;
  return Scale(full, gpu_.idle_w, freq_mhz / gpu_.max_freq_mhz, gpu_.token_power_freq_exponent);
}

double InferencePowerModel::ServerW(double gpu_w) const {
  return server_.other_idle_w + server_.gpus * gpu_w * (1 + server_.other_w_per_gpu_w);
}

double InferencePowerModel::GpuW(double server_w) const {
  return (server_w - server_.other_idle_w) / (server_.gpus * (1 + server_.other_w_per_gpu_w));
}

double InferencePowerModel::ServerIdleW() const { return ServerW(gpu_.idle_w); }

double InferencePowerModel::ServerPromptW(double prompt_tokens, double freq_mhz) const {
  return ServerW(GpuPromptW(prompt_tokens, freq_mhz));
}

double InferencePowerModel::ServerTokenW(int batch, double freq_mhz) const {
  return ServerW(GpuTokenW(batch, freq_mhz));
}

double InferencePowerModel::PromptSeconds(double prompt_tokens) const {
  return service_.prompt_s_base + service_.prompt_s_per_token * prompt_tokens;
}

double InferencePowerModel::TokenIterationSeconds(int batch) const {
  return service_.token_iteration_s_base + service_.token_iteration_s_per_request * batch;
}

double InferencePowerModel::PromptSlowdown(double freq_mhz) const {
  double c = gpu_.prompt_compute_fraction;
  return (1 - c) + c * gpu_.max_freq_mhz / freq_mhz;
}

double InferencePowerModel::TokenSlowdown(double freq_mhz) const {
  double c = gpu_.token_compute_fraction;
  return (1 - c) + c * gpu_.max_freq_mhz / freq_mhz;
}

double InferencePowerModel::PromptFreqUnderCap(double prompt_tokens, double cap_w) const {
  return FreqForCap(GpuPromptW(prompt_tokens, gpu_.max_freq_mhz), gpu_.idle_w, cap_w, gpu_.prompt_power_freq_exponent,
                    gpu_);
}

double InferencePowerModel::TokenFreqUnderCap(int batch, double cap_w) const {
  return FreqForCap(GpuTokenW(batch, gpu_.max_freq_mhz), gpu_.idle_w, cap_w, gpu_.token_power_freq_exponent, gpu_);
}

}  // namespace wattcut::polca
