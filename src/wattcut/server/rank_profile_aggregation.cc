#include "wattcut/server/rank_profile_aggregation.h"

#include <string>

namespace wattcut::server {

Result<AggregatedProfile> AggregateRankProfiles(const std::vector<RankProfile>& profiles, int pp_degree) {
  std::vector<RankMeasurement> measurements;
  for (const RankProfile& p : profiles) {
    if (p.pp_rank < 0 || p.pp_rank >= pp_degree) {
      return Error{"rank " + std::to_string(p.rank) + ": pp_rank " + std::to_string(p.pp_rank) + " >= pp_degree " +
                   std::to_string(pp_degree)};
    }
    const RankId rank{p.rank, p.dp_rank, p.tp_rank};
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      const bool forward = kind == InstructionKind::kForward;
      const auto& times = forward ? p.forward_time : p.backward_time;
      const auto& energies = forward ? p.forward_energy : p.backward_energy;
      // A frequency counts as measured by this rank when it has both a time and an energy.
      for (const auto& [freq_mhz, time_s] : times) {
        auto energy = energies.find(freq_mhz);
        if (energy == energies.end()) continue;
        measurements.push_back(RankMeasurement{p.pp_rank, kind, freq_mhz, rank, time_s, energy->second});
      }
    }
  }
  return AggregateRankMeasurements(std::move(measurements), pp_degree);
}

}  // namespace wattcut::server
