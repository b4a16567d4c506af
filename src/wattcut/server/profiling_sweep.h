// The server-run profiling sweep of one job: when a job has no profile, its ranks run one
// frequency per round, from the highest frequency every rank declared downward, and report
// what they measured (Zeus ProfilingResult); each step ends when every rank has reported.
// The measurements become per-rank profiles, aggregated into the job's profile at the end.
//
// Pure state, no I/O and no lock: the registry holds the job's mutex, copies the sweep
// before a change and puts the copy back when the change cannot be stored.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/server/http_api.h"

namespace wattcut::server {

// One rank's mean time and energy of one forward and one backward computation at one
// frequency, from a ProfilingResult's breakdowns. A zero-bubble rank's breakdowns list
// backward_input (B) and backward_weight (W): their means are kept as the split, and the
// backward, when the breakdowns have no 'backward' list, is B + W.
struct SweepMeasurement {
  struct SplitBackward {
    double input_time_s = 0;
    double input_energy_j = 0;
    double weight_time_s = 0;
    double weight_energy_j = 0;
  };
  double forward_time_s = 0;
  double forward_energy_j = 0;
  double backward_time_s = 0;
  double backward_energy_j = 0;
  // Whether the breakdowns had a 'backward' list (false: the backward is the split's sum).
  bool measured_whole_backward = true;
  std::optional<SplitBackward> split;

  // Writes this measurement into `profile` at `freq_mhz`: forward, the whole backward where
  // measured, and the split where measured (the rank profile keeps what the rank measured;
  // the aggregation takes B + W as the backward of a rank that measured only the split).
  void RecordInto(RankProfile& profile, int freq_mhz) const;
};

class ProfilingSweep {
 public:
  // What is stored (job_state_codec.h) and read back.
  struct State {
    bool active = false;
    bool done = false;
    std::vector<int> freqs_mhz;  // highest first
    size_t step = 0;             // index into freqs_mhz of the frequency being measured
    std::vector<uint8_t> got;    // per rank: reported for this step
  };

  explicit ProfilingSweep(size_t world_size = 0);
  // Resumes a stored sweep; `got` entries beyond world_size are ignored, missing ones are 0.
  ProfilingSweep(State state, size_t world_size);

  // The frequencies a sweep measures: those every rank declared (one list per registered
  // rank), at or above min_freq_mhz, highest first. Empty when they share none.
  static std::vector<int> SweepFrequencies(const std::vector<std::vector<int>>& declared_mhz, int min_freq_mhz);
  // Mean time and energy per forward and per backward computation of `result` (and per B
  // and W pass, when both breakdowns list both); an error when a breakdown lacks a
  // non-empty 'forward' list, or both a non-empty 'backward' list and the two passes.
  static Result<SweepMeasurement> MeasurementOf(const ProfilingResult& result, int freq_mhz);
  // False for a result without any breakdown (time_breakdown and energy_breakdown both {},
  // Zeus's default ProfilingResult): it measured iterations only, so it is stored but is no
  // measurement of a sweep step. One with a breakdown is read with MeasurementOf.
  static bool HasBreakdowns(const ProfilingResult& result);

  const State& state() const { return state_; }
  bool active() const { return state_.active; }
  bool done() const { return state_.done; }
  // The frequency this step measures; nullopt before the start and after the last step.
  std::optional<int> current_freq_mhz() const;
  bool has_reported(size_t rank) const { return state_.got.at(rank) != 0; }

  // Starts measuring `freqs_mhz` (highest first, not empty) from the first.
  void Start(std::vector<int> freqs_mhz);
  // `rank` reported the current step. True when it was the last rank: the sweep moves to
  // the next frequency (and is done after the last).
  bool Record(size_t rank);

 private:
  State state_;
  size_t got_count_ = 0;
};

}  // namespace wattcut::server
