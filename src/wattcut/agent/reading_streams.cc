#include "wattcut/agent/reading_streams.h"

namespace wattcut::agent {

std::chrono::steady_clock::duration StreamPeriod(double seconds) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

std::shared_ptr<void> TakeStreamSlot(const OpenStreams& open_streams) {
  if (open_streams->fetch_add(1) >= kMaxReadingStreams) {
    --*open_streams;
    return nullptr;
  }
  return std::shared_ptr<void>(reinterpret_cast<void*>(1), [open_streams](void*) { --*open_streams; });
}

}  // namespace wattcut::agent
