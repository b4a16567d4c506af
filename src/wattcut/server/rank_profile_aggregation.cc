#include "wattcut/server/rank_profile_aggregation.h"

#include <map>
#include <string>

namespace wattcut::server {

namespace {

// The rank's whole backward: as it sent it and, at each frequency where it sent only the
// split, B + W (one backward is one of each pass).
void WholeBackward(const RankProfile& p, std::map<int, double>& time_s, std::map<int, double>& energy_j) {
  time_s = p.backward_time;
  energy_j = p.backward_energy;
  for (const auto& [freq_mhz, input_time_s] : p.backward_input_time) {
    if (time_s.count(freq_mhz)) continue;
    auto weight_time = p.backward_weight_time.find(freq_mhz);
    auto input_energy = p.backward_input_energy.find(freq_mhz);
    auto weight_energy = p.backward_weight_energy.find(freq_mhz);
    if (weight_time == p.backward_weight_time.end() || input_energy == p.backward_input_energy.end() ||
        weight_energy == p.backward_weight_energy.end()) {
      continue;
    }
    time_s[freq_mhz] = input_time_s + weight_time->second;
    energy_j[freq_mhz] = input_energy->second + weight_energy->second;
  }
}

}  // namespace

Result<AggregatedProfile> AggregateRankProfiles(const std::vector<RankProfile>& profiles, int pp_degree) {
  std::vector<RankMeasurement> measurements;
  for (const RankProfile& p : profiles) {
    if (p.pp_rank < 0 || p.pp_rank >= pp_degree) {
      return Error{"rank " + std::to_string(p.rank) + ": pp_rank " + std::to_string(p.pp_rank) + " >= pp_degree " +
                   std::to_string(pp_degree)};
    }
    const RankId rank{p.rank, p.dp_rank, p.tp_rank};
    std::map<int, double> backward_time, backward_energy;
    WholeBackward(p, backward_time, backward_energy);
    const struct {
      InstructionKind kind;
      const std::map<int, double>& times;
      const std::map<int, double>& energies;
    } kinds[] = {{InstructionKind::kForward, p.forward_time, p.forward_energy},
                 {InstructionKind::kBackward, backward_time, backward_energy},
                 {InstructionKind::kBackwardInput, p.backward_input_time, p.backward_input_energy},
                 {InstructionKind::kBackwardWeight, p.backward_weight_time, p.backward_weight_energy}};
    for (const auto& k : kinds) {
      // A frequency counts as measured by this rank when it has both a time and an energy.
      for (const auto& [freq_mhz, time_s] : k.times) {
        auto energy = k.energies.find(freq_mhz);
        if (energy == k.energies.end()) continue;
        measurements.push_back(RankMeasurement{p.pp_rank, k.kind, freq_mhz, rank, time_s, energy->second});
      }
    }
  }
  return AggregateRankMeasurements(std::move(measurements), pp_degree);
}

}  // namespace wattcut::server
