#include "wattcut/agent/reading_streams.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "wattcut/http/bounded_http_server.h"

namespace wattcut::agent {

std::shared_ptr<void> TakeStreamSlot(const OpenStreams& open_streams) {
  if (open_streams->fetch_add(1) >= kMaxReadingStreams) {
    --*open_streams;
    return nullptr;
  }
  return std::shared_ptr<void>(reinterpret_cast<void*>(1), [open_streams](void*) { --*open_streams; });
}

StreamPause PauseStream(const std::atomic<bool>* stopping, double period_s) {
  using std::chrono::steady_clock;
  const steady_clock::time_point until =
      steady_clock::now() + std::chrono::duration_cast<steady_clock::duration>(std::chrono::duration<double>(period_s));
  auto stops = [stopping] { return stopping != nullptr && *stopping; };
  while (steady_clock::now() < until) {
    if (stops()) return StreamPause::kAgentStopping;
    if (http::BoundedHttpServer::PeerClosed()) return StreamPause::kClientGone;  // frees its slot now
    std::this_thread::sleep_for(
        std::min<steady_clock::duration>(until - steady_clock::now(), std::chrono::milliseconds(100)));
  }
  return stops() ? StreamPause::kAgentStopping : StreamPause::kGoOn;
}

}  // namespace wattcut::agent
