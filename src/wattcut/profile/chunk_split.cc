#include "wattcut/profile/chunk_split.h"

#include <string>

namespace wattcut {

Result<Profile> SplitStagesIntoChunks(const Profile& profile, int chunks) {
  if (chunks < 1) return Error{"chunks per stage must be >= 1, got " + std::to_string(chunks)};
  Profile out(profile.num_stages() * chunks);
  for (int s = 0; s < profile.num_stages(); ++s) {
    for (int k = 0; k < kNumInstructionKinds; ++k) {
      const auto kind = static_cast<InstructionKind>(k);
      for (int c = 0; c < chunks; ++c) {
        auto& list = out.mutable_measurements(s * chunks + c, kind);
        for (const Measurement& m : profile.measurements(s, kind)) {
          list.push_back(Measurement{m.freq_mhz, m.time_s / chunks, m.energy_j / chunks});
        }
      }
    }
  }
  return out;
}

}  // namespace wattcut
