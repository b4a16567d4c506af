// What the node agent's never-ending streams share (/v1/readings/stream's NDJSON, zeusd's
// /gpu/stream_power and /cpu/stream_power server-sent events): a slot among the listener's
// kMaxReadingStreams. A stream holds no worker: it is written a piece every period by the
// listener's stream thread (http/periodic_streams.h), and between pieces it is its connection's
// descriptor, its record and what its client has not read yet.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

namespace wattcut::agent {

// Readings streams open at once on one listener, of either API; one more is 503. A bound on
// memory: each stream keeps at most 64 KiB its client has not read (DeferredResponse::
// kMaxUnsentStreamBytes) and about 9 KB of its own, so 256 streams hold at most about 19 MB.
// Their reads share one thread per listener: many fast streams fall behind their period, they
// never take the workers a setter, a renewal or a reading needs.
inline constexpr int kMaxReadingStreams = 256;
// The streams open on one listener; shared by its two APIs' routes.
using OpenStreams = std::shared_ptr<std::atomic<int>>;

// A stream's period in seconds (a query's interval_s, zeusd's rates) as the stream thread takes it.
std::chrono::steady_clock::duration StreamPeriod(double seconds);

// A slot for one more stream, held while the returned pointer (kept by the stream's producer)
// lives; nullptr when kMaxReadingStreams are open (the caller answers 503).
std::shared_ptr<void> TakeStreamSlot(const OpenStreams& open_streams);

}  // namespace wattcut::agent
