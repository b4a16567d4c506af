// The most a row can read, as a fraction of its budget, under each level of a policy: every server
// at its provisioned peak (row.provisioned_w_per_server, what the budget was sized by), scaled for
// the clock its class is locked to at that level by the server model's peak (the larger of a
// prefill at the tokens of peak power and a full decode batch) at that clock against the maximum
// clock. Servers of no priority class (training) count at their provisioned peak at every level.
// The headroom policy reads it: a level at which the row cannot reach the brake needs nothing
// deeper, and at the provisioned size (servers x provisioned peak = budget) nothing at all.
#pragma once

#include <array>

#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/row_power_policy.h"

namespace wattcut::polca {

struct RowServers {
  int low_priority = 0;
  int high_priority = 0;
  int training = 0;
};

// Indexed by PolicyLevel.
using LevelCeilings = std::array<double, 4>;

LevelCeilings RowCeilings(const PolcaConfig& config, const RowPowerPolicy& policy, const RowServers& servers);

}  // namespace wattcut::polca
