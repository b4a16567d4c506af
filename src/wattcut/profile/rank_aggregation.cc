#include "wattcut/profile/rank_aggregation.h"

#include <algorithm>
#include <array>
#include <tuple>

namespace wattcut {
namespace {

constexpr size_t kMaxNamedRanks = 8;

std::string RankText(const RankId& rank) {
  std::string where = "(dp_rank " + std::to_string(rank.dp_rank) + ", tp_rank " + std::to_string(rank.tp_rank) + ")";
  return rank.rank >= 0 ? "rank " + std::to_string(rank.rank) + " " + where : where;
}

std::string Header(int stage, InstructionKind kind, int freq_mhz) {
  return "stage " + std::to_string(stage) + " " + std::string(InstructionName(kind)) + " " + std::to_string(freq_mhz) +
         " MHz";
}

// Measurement order: stage, kind, frequency descending, dp_rank, tp_rank.
bool Before(const RankMeasurement& a, const RankMeasurement& b) {
  return std::make_tuple(a.stage, a.kind, -a.freq_mhz, a.rank.dp_rank, a.rank.tp_rank) <
         std::make_tuple(b.stage, b.kind, -b.freq_mhz, b.rank.dp_rank, b.rank.tp_rank);
}

bool SameRank(const RankId& a, const RankId& b) { return a.dp_rank == b.dp_rank && a.tp_rank == b.tp_rank; }
bool RankBefore(const RankId& a, const RankId& b) {
  return std::tie(a.dp_rank, a.tp_rank) < std::tie(b.dp_rank, b.tp_rank);
}

}  // namespace

std::string DroppedFrequencyMessage(const DroppedFrequency& dropped) {
  std::string out = Header(dropped.stage, dropped.kind, dropped.freq_mhz) + " is not used: ";
  const size_t missing = dropped.missing_ranks.size();
  for (size_t i = 0; i < missing && i < kMaxNamedRanks; ++i) {
    if (i > 0) out += i + 1 == missing ? " and " : ", ";
    out += RankText(dropped.missing_ranks[i]);
  }
  if (missing > kMaxNamedRanks) out += " and " + std::to_string(missing - kMaxNamedRanks) + " more";
  out += " did not measure it (" + std::to_string(missing) + " of " + std::to_string(dropped.num_ranks) +
         " ranks of the stage); a frequency is used only where every rank of the stage measured it";
  return out;
}

Result<AggregatedProfile> AggregateRankMeasurements(std::vector<RankMeasurement> measurements, int num_stages) {
  for (const RankMeasurement& m : measurements) {
    if (m.stage < 0 || m.stage >= num_stages) {
      return Error{"stage " + std::to_string(m.stage) + " of " + RankText(m.rank) +
                   " is outside the pipeline's stages 0.." + std::to_string(num_stages - 1)};
    }
  }
  std::sort(measurements.begin(), measurements.end(), Before);

  // The ranks of each stage: every (dp_rank, tp_rank) with any measurement of it.
  std::vector<std::vector<RankId>> stage_ranks(static_cast<size_t>(num_stages));
  for (const RankMeasurement& m : measurements) stage_ranks[static_cast<size_t>(m.stage)].push_back(m.rank);
  for (std::vector<RankId>& ranks : stage_ranks) {
    std::stable_sort(ranks.begin(), ranks.end(), RankBefore);
    ranks.erase(std::unique(ranks.begin(), ranks.end(), SameRank), ranks.end());
  }

  AggregatedProfile out{Profile(num_stages), {}};
  // Per (stage, kind): whether it had any measurement, and how many frequencies were dropped.
  std::vector<std::array<int, kNumInstructionKinds>> seen(static_cast<size_t>(num_stages), {0, 0, 0, 0});
  for (size_t begin = 0; begin < measurements.size();) {
    const RankMeasurement& first = measurements[begin];
    size_t end = begin + 1;
    while (end < measurements.size() && measurements[end].stage == first.stage &&
           measurements[end].kind == first.kind && measurements[end].freq_mhz == first.freq_mhz) {
      ++end;
    }
    for (size_t i = begin + 1; i < end; ++i) {
      if (SameRank(measurements[i - 1].rank, measurements[i].rank)) {
        return Error{Header(first.stage, first.kind, first.freq_mhz) + ": " + RankText(measurements[i].rank) +
                     " has two measurements"};
      }
    }
    const std::vector<RankId>& ranks = stage_ranks[static_cast<size_t>(first.stage)];
    ++seen[static_cast<size_t>(first.stage)][static_cast<size_t>(first.kind)];
    if (end - begin < ranks.size()) {
      // Both lists are sorted by (dp_rank, tp_rank) and the group's ranks are a subset of the stage's.
      DroppedFrequency dropped{first.stage, first.kind, first.freq_mhz, {}, static_cast<int64_t>(ranks.size())};
      size_t j = begin;
      for (const RankId& rank : ranks) {
        if (j < end && SameRank(measurements[j].rank, rank)) {
          ++j;
        } else {
          dropped.missing_ranks.push_back(rank);
        }
      }
      out.dropped.push_back(std::move(dropped));
      begin = end;
      continue;
    }
    // Over tp within each dp replica: max time, summed energy; then the mean over dp replicas.
    double time_sum = 0, energy_sum = 0;
    int replicas = 0;
    for (size_t i = begin; i < end;) {
      double time = 0, energy = 0;
      const int64_t dp = measurements[i].rank.dp_rank;
      for (; i < end && measurements[i].rank.dp_rank == dp; ++i) {
        time = std::max(time, measurements[i].time_s);
        energy += measurements[i].energy_j;
      }
      time_sum += time;
      energy_sum += energy;
      ++replicas;
    }
    out.profile.mutable_measurements(first.stage, first.kind)
        .push_back(Measurement{first.freq_mhz, time_sum / replicas, energy_sum / replicas});
    begin = end;
  }

  for (int s = 0; s < num_stages; ++s) {
    const auto had = [&](InstructionKind kind) { return seen[static_cast<size_t>(s)][static_cast<size_t>(kind)] > 0; };
    // A stage's backward is measured whole, or split into backward_input and
    // backward_weight (the zero-bubble passes), or both; never half a split.
    const bool split_input = had(InstructionKind::kBackwardInput), split_weight = had(InstructionKind::kBackwardWeight);
    if (split_input != split_weight) {
      return Error{"stage " + std::to_string(s) + " has '" +
                   std::string(split_input ? "backward_input" : "backward_weight") + "' but no '" +
                   std::string(split_input ? "backward_weight" : "backward_input") +
                   "' measurements (a split backward needs both)"};
    }
    std::vector<InstructionKind> required = {InstructionKind::kForward};
    if (!split_input || had(InstructionKind::kBackward)) required.push_back(InstructionKind::kBackward);
    if (split_input) {
      required.push_back(InstructionKind::kBackwardInput);
      required.push_back(InstructionKind::kBackwardWeight);
    }
    for (InstructionKind kind : required) {
      if (!out.profile.measurements(s, kind).empty()) continue;
      if (seen[static_cast<size_t>(s)][static_cast<size_t>(kind)] == 0) {
        return Error{"stage " + std::to_string(s) + " has no '" + std::string(InstructionName(kind)) +
                     "' measurements (expected every stage 0.." + std::to_string(num_stages - 1) +
                     " to have forward and backward rows)"};
      }
      auto first_dropped = std::find_if(out.dropped.begin(), out.dropped.end(),
                                        [&](const DroppedFrequency& d) { return d.stage == s && d.kind == kind; });
      return Error{"stage " + std::to_string(s) + " has no '" + std::string(InstructionName(kind)) +
                   "' frequency that every rank of the stage measured (" +
                   std::to_string(seen[static_cast<size_t>(s)][static_cast<size_t>(kind)]) +
                   " frequencies left out; the first: " + DroppedFrequencyMessage(*first_dropped) + ")"};
    }
  }
  return out;
}

}  // namespace wattcut
