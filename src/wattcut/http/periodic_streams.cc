#include "wattcut/http/periodic_streams.h"

#include <vector>

namespace wattcut::http {

PeriodicStreams::~PeriodicStreams() { Stop(); }

uint64_t PeriodicStreams::Add(std::shared_ptr<DeferredResponse> response, Clock::duration period, Produce produce) {
  MutexLock lock(mu_);
  if (stopped_) {
    response->EndStream();
    return 0;
  }
  const uint64_t id = next_id_++;
  streams_.emplace(id, std::make_shared<Stream>(Stream{std::move(response), period, std::move(produce)}));
  due_.Add(Clock::now(), id);
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
  wake_.NotifyAll();
  return id;
}

void PeriodicStreams::Remove(uint64_t id) {
  std::shared_ptr<Stream> removed;  // destroyed outside the lock
  MutexLock lock(mu_);
  auto it = streams_.find(id);
  if (it == streams_.end()) return;
  removed = std::move(it->second);
  streams_.erase(it);
}

size_t PeriodicStreams::size() const {
  MutexLock lock(mu_);
  return streams_.size();
}

void PeriodicStreams::Stop() {
  std::map<uint64_t, std::shared_ptr<Stream>> streams;
  std::thread thread;
  {
    MutexLock lock(mu_);
    stopped_ = true;
    streams.swap(streams_);
    due_.clear();
    thread = std::move(thread_);
  }
  wake_.NotifyAll();
  if (thread.joinable()) thread.join();
  for (auto& [id, stream] : streams) stream->response->EndStream();
}

void PeriodicStreams::Run() {
  MutexLock lock(mu_);
  while (!stopped_) {
    const std::vector<DeadlineQueue::Id> due = due_.TakeDue(Clock::now());
    if (due.empty()) due_.WaitForNext(mu_, wake_);
    for (size_t i = 0; i < due.size() && !stopped_; ++i) ProduceNext(due[i]);
  }
}

void PeriodicStreams::ProduceNext(uint64_t id) {
  auto it = streams_.find(id);
  if (it == streams_.end()) return;  // removed: its client went away
  std::shared_ptr<Stream> stream = it->second;
  mu_.unlock();
  bool goes_on = !stream->response->over();
  if (goes_on) {
    StreamPiece piece = stream->produce();
    goes_on = stream->response->SendChunk(piece.data) && !piece.last;
    if (piece.last) stream->response->EndStream();
  }
  const Clock::time_point next = Clock::now() + stream->period;
  mu_.lock();
  auto still = streams_.find(id);
  if (still == streams_.end()) return;
  if (goes_on) {
    due_.Add(next, id);
    return;
  }
  streams_.erase(still);
  mu_.unlock();
  stream.reset();  // the producer's state (its slot) goes outside the lock
  mu_.lock();
}

}  // namespace wattcut::http
