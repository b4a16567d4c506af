#include "wattcut/polca/row_ceiling.h"

#include <algorithm>

#include "wattcut/polca/inference_power_model.h"

namespace wattcut::polca {

LevelCeilings RowCeilings(const PolcaConfig& config, const RowPowerPolicy& policy, const RowServers& servers) {
  const InferencePowerModel model(config);
  const double f_max = model.max_freq_mhz();
  auto peak_w = [&](double freq_mhz) {
    return std::max(model.ServerPromptW(config.gpu.prompt_tokens_for_peak, freq_mhz),
                    model.ServerTokenW(config.service.max_batch, freq_mhz));
  };
  const double peak_at_max_w = peak_w(f_max);
  // A class's share of its provisioned peak at the clock it is locked to (1 when not locked).
  auto share = [&](const ClassSetting& s) { return s.lock_mhz > 0 ? peak_w(s.lock_mhz) / peak_at_max_w : 1.0; };
  const double provisioned_w = config.row.provisioned_w_per_server;
  const double budget_w = config.row_budget_w();
  LevelCeilings ceilings{};
  for (int level = 0; level < 4; ++level) {
    const auto l = static_cast<PolicyLevel>(level);
    const double at_peak = servers.low_priority * share(policy.SettingFor(l, Priority::kLow)) +
                           servers.high_priority * share(policy.SettingFor(l, Priority::kHigh)) + servers.training;
    ceilings[static_cast<size_t>(level)] = at_peak * provisioned_w / budget_w;
  }
  return ceilings;
}

}  // namespace wattcut::polca
