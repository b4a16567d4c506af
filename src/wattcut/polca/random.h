// A small seeded random source whose sequence is the same on every platform and
// standard library (std::uniform_*_distribution is not), so every simulation is
// reproducible from its seed. SplitMix64 (Steele, Lea, Flood 2014).
#pragma once

#include <cstdint>

namespace wattcut::polca {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  // A stream for (seed, index): independent streams for blocks or servers.
  SplitMix64(uint64_t seed, uint64_t stream) : state_(seed) { state_ = Next() ^ (stream * 0xD1B54A32D192ED03ULL); }

  uint64_t Next() {
    uint64_t z = (state_ += kGamma);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Skips `draws` draws in O(1) (the state moves by a constant a draw), as std engines' discard:
  // a stream's k-th draw can be had without the k before it.
  void Discard(uint64_t draws) { state_ += draws * kGamma; }

 private:
  static constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ULL;
  uint64_t state_;
};

}  // namespace wattcut::polca
