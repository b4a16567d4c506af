// What the node agent's never-ending streams share (/v1/readings/stream's NDJSON, zeusd's
// /gpu/stream_power and /cpu/stream_power server-sent events): a slot among the listener's
// kMaxReadingStreams, and the pause between two writes.
#pragma once

#include <atomic>
#include <memory>

namespace wattcut::agent {

// Readings streams open at once on one listener, of either API: half its workers
// (AgentServiceOptions's 32), so that streams never take the workers a setter, a renewal or a
// reading needs. One more is 503.
inline constexpr int kMaxReadingStreams = 16;
// The streams open on one listener; shared by its two APIs' routes.
using OpenStreams = std::shared_ptr<std::atomic<int>>;

// A slot for one more stream, held while the returned pointer (kept by the stream's content
// provider) lives; nullptr when kMaxReadingStreams are open (the caller answers 503).
std::shared_ptr<void> TakeStreamSlot(const OpenStreams& open_streams);

// Waits `period_s` in slices of at most 100 ms, so that a stopping agent (`*stopping`; nullptr:
// never) or a client gone ends the stream within 100 ms.
enum class StreamPause { kGoOn, kAgentStopping, kClientGone };
StreamPause PauseStream(const std::atomic<bool>* stopping, double period_s);

}  // namespace wattcut::agent
