#include "wattcut/server/profiling_sweep.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <string>

namespace wattcut::server {

ProfilingSweep::ProfilingSweep(size_t world_size) { state_.got.assign(world_size, 0); }

ProfilingSweep::ProfilingSweep(State state, size_t world_size) : state_(std::move(state)) {
  state_.got.resize(world_size, 0);
  for (uint8_t& g : state_.got) g = g ? 1 : 0;
  got_count_ = static_cast<size_t>(std::count(state_.got.begin(), state_.got.end(), 1));
}

std::vector<int> ProfilingSweep::SweepFrequencies(const std::vector<std::vector<int>>& declared_mhz, int min_freq_mhz) {
  std::set<int> common;
  bool first = true;
  for (const std::vector<int>& rank : declared_mhz) {
    std::set<int> declared;
    for (int f : rank) {
      if (f >= min_freq_mhz) declared.insert(f);
    }
    if (first) {
      common = std::move(declared);
      first = false;
    } else {
      std::set<int> keep;
      std::set_intersection(common.begin(), common.end(), declared.begin(), declared.end(),
                            std::inserter(keep, keep.begin()));
      common = std::move(keep);
    }
  }
  return std::vector<int>(common.rbegin(), common.rend());
}

Result<SweepMeasurement> ProfilingSweep::MeasurementOf(const ProfilingResult& result, int freq_mhz) {
  auto mean = [](const std::map<std::string, std::vector<std::vector<double>>>& breakdown,
                 const char* key) -> std::optional<double> {
    auto it = breakdown.find(key);
    if (it == breakdown.end()) return std::nullopt;
    double sum = 0;
    size_t n = 0;
    for (const auto& iteration : it->second) {
      for (double v : iteration) {
        sum += v;
        ++n;
      }
    }
    if (n == 0) return std::nullopt;
    return sum / static_cast<double>(n);
  };
  auto ft = mean(result.time_breakdown, "forward");
  auto fe = mean(result.energy_breakdown, "forward");
  auto bt = mean(result.time_breakdown, "backward");
  auto be = mean(result.energy_breakdown, "backward");
  // A zero-bubble schedule's rank reports backward_input and backward_weight: their means
  // are kept, and one backward is one of each.
  auto bit = mean(result.time_breakdown, "backward_input");
  auto bie = mean(result.energy_breakdown, "backward_input");
  auto bwt = mean(result.time_breakdown, "backward_weight");
  auto bwe = mean(result.energy_breakdown, "backward_weight");
  std::optional<SweepMeasurement::SplitBackward> split;
  if (bit && bie && bwt && bwe) split = SweepMeasurement::SplitBackward{*bit, *bie, *bwt, *bwe};
  const bool whole = bt && be;
  if (!whole && split) {
    bt = split->input_time_s + split->weight_time_s;
    be = split->input_energy_j + split->weight_energy_j;
  }
  if (!ft || !fe || !bt || !be) {
    return Error{"rank " + std::to_string(result.rank) + ": this round profiles " + std::to_string(freq_mhz) +
                 " MHz; time_breakdown and energy_breakdown need non-empty 'forward' and 'backward' (or "
                 "'backward_input' and 'backward_weight') lists"};
  }
  return SweepMeasurement{*ft, *fe, *bt, *be, whole, split};
}

void SweepMeasurement::RecordInto(RankProfile& profile, int freq_mhz) const {
  profile.forward_time[freq_mhz] = forward_time_s;
  profile.forward_energy[freq_mhz] = forward_energy_j;
  if (measured_whole_backward || !split) {
    profile.backward_time[freq_mhz] = backward_time_s;
    profile.backward_energy[freq_mhz] = backward_energy_j;
  }
  if (split) {
    profile.backward_input_time[freq_mhz] = split->input_time_s;
    profile.backward_input_energy[freq_mhz] = split->input_energy_j;
    profile.backward_weight_time[freq_mhz] = split->weight_time_s;
    profile.backward_weight_energy[freq_mhz] = split->weight_energy_j;
  }
}

bool ProfilingSweep::HasBreakdowns(const ProfilingResult& result) {
  return !result.time_breakdown.empty() || !result.energy_breakdown.empty();
}

std::optional<int> ProfilingSweep::current_freq_mhz() const {
  if (!state_.active || state_.done || state_.step >= state_.freqs_mhz.size()) return std::nullopt;
  return state_.freqs_mhz[state_.step];
}

void ProfilingSweep::Start(std::vector<int> freqs_mhz) {
  state_.active = true;
  state_.done = false;
  state_.freqs_mhz = std::move(freqs_mhz);
  state_.step = 0;
  std::fill(state_.got.begin(), state_.got.end(), 0);
  got_count_ = 0;
}

bool ProfilingSweep::Record(size_t rank) {
  if (!current_freq_mhz() || state_.got.at(rank)) return false;
  state_.got[rank] = 1;
  ++got_count_;
  if (got_count_ < state_.got.size()) return false;
  ++state_.step;
  std::fill(state_.got.begin(), state_.got.end(), 0);
  got_count_ = 0;
  if (state_.step >= state_.freqs_mhz.size()) state_.done = true;
  return true;
}

}  // namespace wattcut::server
