// Never-ending answers written a piece every period (the node agent's readings stream, zeusd's
// power streams), without a thread each: every stream of a server is produced on one thread of
// its own, and between its pieces a stream is its connection's descriptor, its DeferredResponse
// (deferred_response.h) and its producer's state.
//
// A stream's first piece is produced at once, the next one `period` after the previous one was
// produced; a producer slower than its period (many streams, a slow read) makes its stream fall
// behind, never pile up. Producing runs on the streams' thread, so it never takes the workers the
// server's other requests need. A stream ends when its producer says so (its last piece), when
// its client goes away or does not keep up (deferred_response.h), or at Stop, which ends every
// stream with its last chunk.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "wattcut/base/deadline_queue.h"
#include "wattcut/base/mutex.h"
#include "wattcut/http/deferred_response.h"

namespace wattcut::http {

// What a stream's producer gives each period: bytes to send ("" sends nothing) and whether they
// end the stream.
struct StreamPiece {
  std::string data;
  bool last = false;
};

class PeriodicStreams {
 public:
  using Clock = DeadlineQueue::Clock;
  using Produce = std::function<StreamPiece()>;

  PeriodicStreams() = default;
  ~PeriodicStreams();
  PeriodicStreams(const PeriodicStreams&) = delete;
  PeriodicStreams& operator=(const PeriodicStreams&) = delete;

  // Produces into `response` (its stream started) every `period`; the thread starts with the first
  // stream. Returns the stream's id; 0 after Stop (the stream is ended at once).
  uint64_t Add(std::shared_ptr<DeferredResponse> response, Clock::duration period, Produce produce) EXCLUDES(mu_);
  // Forgets stream `id` (its client has gone): its producer is destroyed now, not at its next period.
  void Remove(uint64_t id) EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);
  // Ends every stream with its last chunk and the thread; nothing is produced after it returns.
  void Stop() EXCLUDES(mu_);

 private:
  struct Stream {
    std::shared_ptr<DeferredResponse> response;
    Clock::duration period;
    Produce produce;
  };
  void Run() EXCLUDES(mu_);
  // Produces stream `id`'s next piece (releasing the lock while it does) and queues the one
  // after, or forgets the stream when it is over.
  void ProduceNext(uint64_t id) REQUIRES(mu_);

  mutable Mutex mu_;
  CondVar wake_;
  bool stopped_ GUARDED_BY(mu_) = false;
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  DeadlineQueue due_ GUARDED_BY(mu_);
  std::map<uint64_t, std::shared_ptr<Stream>> streams_ GUARDED_BY(mu_);
  std::thread thread_ GUARDED_BY(mu_);
};

}  // namespace wattcut::http
