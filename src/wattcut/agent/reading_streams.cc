#include "wattcut/agent/reading_streams.h"

namespace wattcut::agent {

std::shared_ptr<void> TakeStreamSlot(const OpenStreams& open_streams) {
  if (open_streams->fetch_add(1) >= kMaxReadingStreams) {
    --*open_streams;
    return nullptr;
  }
  return std::shared_ptr<void>(reinterpret_cast<void*>(1), [open_streams](void*) { --*open_streams; });
}

}  // namespace wattcut::agent
