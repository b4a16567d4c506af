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

Result<Profile> RepeatDeviceRowsPerChunk(const Profile& per_device, int chunks) {
  if (chunks < 1) return Error{"chunks per device must be >= 1, got " + std::to_string(chunks)};
  const int devices = per_device.num_stages();
  Profile out(devices * chunks);
  for (int c = 0; c < chunks; ++c) {
    for (int d = 0; d < devices; ++d) {
      for (int k = 0; k < kNumInstructionKinds; ++k) {
        const auto kind = static_cast<InstructionKind>(k);
        out.mutable_measurements(c * devices + d, kind) = per_device.measurements(d, kind);
      }
    }
  }
  return out;
}

}  // namespace wattcut
