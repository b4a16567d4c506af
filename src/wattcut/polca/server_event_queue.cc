#include "wattcut/polca/server_event_queue.h"

#include <algorithm>
#include <cmath>

namespace wattcut::polca {

ServerEventQueue::ServerEventQueue(size_t servers, double typical_interval_s) : nodes_(servers) {
  size_t slots = 1;
  while (slots < 4 * servers) slots *= 2;
  head_.assign(slots, kNone);
  occupied_.assign((slots + 63) / 64, 0);
  mask_ = slots - 1;
  // Two events a bucket: n servers have n events per typical interval.
  const double n = servers > 0 ? static_cast<double>(servers) : 1.0;
  buckets_per_s_ = n / (2 * (typical_interval_s > 0 ? typical_interval_s : 1.0));
}

int64_t ServerEventQueue::BucketOf(double time_s) const {
  // Clamped into int64 (a tiny interval and a long run could pass it): the buckets past the clamp
  // are one, and the order within a bucket is still by time.
  constexpr double kLimit = 4.0e18;
  const double b = std::floor(time_s * buckets_per_s_);
  return static_cast<int64_t>(b < -kLimit ? -kLimit : (b > kLimit ? kLimit : b));
}

void ServerEventQueue::Link(size_t server) {
  Node& node = nodes_[server];
  const size_t slot = static_cast<size_t>(node.bucket) & mask_;
  node.next = head_[slot];
  head_[slot] = static_cast<uint32_t>(server);
  occupied_[slot / 64] |= uint64_t{1} << (slot % 64);
}

void ServerEventQueue::Unlink(size_t server) {
  // The link that points at `server`: its slot's head, or its predecessor's `next`.
  const size_t slot = static_cast<size_t>(nodes_[server].bucket) & mask_;
  uint32_t* link = &head_[slot];
  while (*link != server) link = &nodes_[*link].next;
  *link = nodes_[server].next;
  if (head_[slot] == kNone) occupied_[slot / 64] &= ~(uint64_t{1} << (slot % 64));
}

size_t ServerEventQueue::ToOccupied(size_t slot) const {
  const size_t words = occupied_.size();
  const size_t w = slot / 64;
  const uint64_t here = occupied_[w] & (~uint64_t{0} << (slot % 64));
  if (here != 0) return w * 64 + static_cast<size_t>(__builtin_ctzll(here)) - slot;
  for (size_t k = 1; k <= words; ++k) {
    const size_t at = (w + k) % words;  // the last turn is `w` again, for the slots before `slot`
    if (occupied_[at] != 0) {
      const size_t found = at * 64 + static_cast<size_t>(__builtin_ctzll(occupied_[at]));
      return (found - slot) & mask_;
    }
  }
  return mask_ + 1;  // no event (not called then)
}

void ServerEventQueue::Update(size_t server, double time_s) {
  Node& node = nodes_[server];
  const double before_s = node.time_s;
  if (before_s == time_s) return;
  const double earliest_s = top_time_;
  if (before_s != std::numeric_limits<double>::infinity()) {
    Unlink(server);
    --events_;
  }
  node.time_s = time_s;
  if (time_s != std::numeric_limits<double>::infinity()) {
    node.bucket = BucketOf(time_s);
    if (events_ == 0 || node.bucket < walk_) walk_ = node.bucket;
    Link(server);
    ++events_;
  }
  if (server == top_) {
    if (time_s > before_s) FindTop();  // earlier: still the earliest
    top_time_ = nodes_[top_].time_s;
  } else if (Before(server, top_)) {
    top_ = server;
    top_time_ = time_s;
  }
  TrackAhead(time_s, earliest_s);  // last: a re-bucketing sees every event in place
}

void ServerEventQueue::TrackAhead(double time_s, double earliest_s) {
  // Ahead of the earliest event before the update (a simulation's new times; none is an infinity).
  if (earliest_s == std::numeric_limits<double>::infinity() || time_s == std::numeric_limits<double>::infinity() ||
      !(time_s > earliest_s)) {
    return;
  }
  ahead_sum_s_ += time_s - earliest_s;
  if (++ahead_count_ < kWidthCheckUpdates) return;
  const double mean_ahead_s = ahead_sum_s_ / static_cast<double>(ahead_count_);
  ahead_sum_s_ = 0;
  ahead_count_ = 0;
  const double want = static_cast<double>(mask_ + 1) / (kRingSpanInMeanAheads * mean_ahead_s);
  if (std::isfinite(want) && want > 0 && (want > 2 * buckets_per_s_ || 2 * want < buckets_per_s_)) Rebucket(want);
}

void ServerEventQueue::Rebucket(double buckets_per_s) {
  buckets_per_s_ = buckets_per_s;
  std::fill(head_.begin(), head_.end(), kNone);
  std::fill(occupied_.begin(), occupied_.end(), 0);
  for (size_t s = 0; s < nodes_.size(); ++s) {
    if (nodes_[s].time_s == std::numeric_limits<double>::infinity()) continue;
    nodes_[s].bucket = BucketOf(nodes_[s].time_s);
    Link(s);
  }
  // The earliest event's bucket is the first (BucketOf does not decrease with time).
  if (events_ > 0) walk_ = BucketOf(top_time_);
}

void ServerEventQueue::FindTop() {
  if (events_ == 0) {
    top_ = 0;
    top_time_ = std::numeric_limits<double>::infinity();
    return;
  }
  for (size_t walked = 0;;) {
    const size_t skip = ToOccupied(static_cast<size_t>(walk_) & mask_);
    walk_ += static_cast<int64_t>(skip);
    walked += skip;
    if (walked > mask_) break;
    uint32_t best = kNone;
    for (uint32_t s = head_[static_cast<size_t>(walk_) & mask_]; s != kNone; s = nodes_[s].next) {
      // A slot also holds later turns of the ring: only this bucket's servers count.
      if (nodes_[s].bucket == walk_ && (best == kNone || Before(s, best))) best = s;
    }
    if (best != kNone) {
      top_ = best;
      top_time_ = nodes_[best].time_s;
      return;
    }
    ++walk_;
    ++walked;
  }
  // A whole ring without an event: the earliest is further ahead than the ring reaches.
  size_t best = 0;
  for (size_t s = 1; s < nodes_.size(); ++s) {
    if (Before(s, best)) best = s;
  }
  top_ = best;
  top_time_ = nodes_[best].time_s;
  walk_ = nodes_[best].bucket;
}

}  // namespace wattcut::polca
