// The servers' next event times, the earliest first: a calendar queue. Time is cut into buckets
// of a width that puts about two events in each (from how far apart one server's events usually
// are, and the number of servers), on a ring of at least four buckets a server; each bucket holds
// its servers in an intrusive list, singly linked. A change of a server's time links it at the
// head of its new bucket's list (O(1)) and unlinks it from its old one, walking that list from its
// head to the server (about two members; the earliest's own list, the one changed most, was just
// read by the walk that found it; servers whose events coincide share a list, whose length the
// search for the earliest already walks). A doubly linked list wrote the old head's node at every
// link: a miss in the L1 cache at every event once the nodes outgrew it. The earliest is found by
// walking the buckets from the last one found, from one non-empty slot to the next by a bitmap of
// them, 64 slots a word (O(1) amortized: the walk moves on as simulated time does, and a quiet
// row's empty slots cost a bit each, not a visit). Ties go to the lower server index, so the
// simulation order is deterministic, and the same as any other exact queue's: the order is total.
// A ring's walk that finds nothing (every event far ahead) ends in a scan over the servers.
//
// The width follows the events: the queue keeps the mean of how far ahead of the earliest one
// each new time lies, and every kWidthCheckUpdates updates it re-buckets every event when that
// mean and the ring's span (kRingSpanInMeanAheads of it) have drifted apart by more than twice.
// A ring far shorter than the events' spread leaves each slot holding later turns that every
// walk over it reads and passes: a row's events lie about 1.9 s ahead while a ring sized from the
// decode iteration (28 ms) spans 0.36 s, and a walk read three servers' nodes to find one.
//
// Before this, a 4-ary heap: O(log n) an update, a third of a 2,560-server day.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace wattcut::polca {

class ServerEventQueue {
 public:
  // `typical_interval_s`: how far apart one server's events usually are (> 0); it sets only the
  // bucket width, never the order.
  ServerEventQueue(size_t servers, double typical_interval_s);

  // The earliest server (the lowest index among equal times; server 0 when none has an event).
  size_t top() const { return top_; }
  double top_time() const { return top_time_; }
  // Server `server`'s next event is at `time_s` (infinity: none).
  void Update(size_t server, double time_s);
  // How far the ring of buckets reaches, in seconds (it follows the events; see above).
  double ring_span_s() const { return static_cast<double>(mask_ + 1) / buckets_per_s_; }

 private:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  // A server's place in the queue: what a walk over a bucket's list reads of each member, in one
  // cache line (four arrays were four misses a member once a row outgrew the L1 cache).
  struct Node {
    double time_s = std::numeric_limits<double>::infinity();  // infinity when it has no event
    int64_t bucket = 0;                                       // when it has an event
    uint32_t next = kNone;                                    // the next server in its bucket's list
  };
  // Updates between checks of the width, and the ring's span in mean times ahead.
  static constexpr int64_t kWidthCheckUpdates = 1 << 16;
  static constexpr double kRingSpanInMeanAheads = 4.0;

  int64_t BucketOf(double time_s) const;
  // Counts how far ahead of `earliest_s` (the earliest event before the update) `time_s` lies;
  // re-buckets when the ring no longer fits the mean.
  void TrackAhead(double time_s, double earliest_s);
  // Every event into buckets of the width for `buckets_per_s` (the order is unchanged).
  void Rebucket(double buckets_per_s);
  void Link(size_t server);
  void Unlink(size_t server);
  bool Before(size_t a, size_t b) const {
    return nodes_[a].time_s < nodes_[b].time_s || (nodes_[a].time_s == nodes_[b].time_s && a < b);
  }
  void FindTop();
  // Slots from `slot` to the next non-empty one, cyclically (0: it is non-empty); needs an event.
  size_t ToOccupied(size_t slot) const;

  std::vector<Node> nodes_;         // per server
  std::vector<uint32_t> head_;      // per ring slot
  std::vector<uint64_t> occupied_;  // bit per ring slot: its list is not empty
  size_t mask_ = 0;                 // ring slots - 1 (a power of two)
  double buckets_per_s_ = 0;
  int64_t walk_ = 0;        // no server's event is in a bucket before this one
  size_t events_ = 0;       // servers with an event
  double ahead_sum_s_ = 0;  // since the last check of the width
  int64_t ahead_count_ = 0;
  size_t top_ = 0;
  double top_time_ = std::numeric_limits<double>::infinity();
};

}  // namespace wattcut::polca
