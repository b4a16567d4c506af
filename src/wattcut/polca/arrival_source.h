// Where a simulated row's requests come from, block by block: the one interface the row
// simulator reads arrivals through. Two sources implement it:
//   * ArrivalExpansion (--time-of-day cosine): one trace hour stretched over days by a diurnal
//     cosine envelope;
//   * TraceTimeArrivals (--time-of-day trace): a long trace streamed on its own timeline, its
//     rate scaled to the row.
// A source is reproducible from its seed: the runs of a sweep that open a source with the same
// seed and row see the same arrivals.
#pragma once

#include <cstdint>
#include <vector>

#include "wattcut/base/huge_page_allocator.h"
#include "wattcut/base/result.h"

namespace wattcut::polca {

enum class Priority : uint8_t { kHigh = 0, kLow = 1 };

struct Arrival {
  double time_s = 0;  // seconds after the start of the run
  int32_t context_tokens = 0;
  int32_t generated_tokens = 0;
  Priority priority = Priority::kHigh;
};

// The order of arrivals within a block: by time, then prompt and output tokens and priority, so
// that a block's order does not depend on how it was built.
inline bool ArrivesBefore(const Arrival& a, const Arrival& b) {
  if (a.time_s != b.time_s) return a.time_s < b.time_s;
  if (a.context_tokens != b.context_tokens) return a.context_tokens < b.context_tokens;
  if (a.generated_tokens != b.generated_tokens) return a.generated_tokens < b.generated_tokens;
  return a.priority < b.priority;
}

// One block of arrivals (ArrivalExpansion: a window of a second or more; TraceTimeArrivals: an hour of a
// row, millions at thousands of servers), written, sorted and read end to end: in huge pages
// when it is large (base/huge_page_allocator.h).
using ArrivalBlock = std::vector<Arrival, HugePageAllocator<Arrival>>;

class ArrivalSource {
 public:
  virtual ~ArrivalSource() = default;
  // Replaces `out` with the next block's arrivals, in time order and after every arrival of
  // the blocks before; false when the arrivals are exhausted (out is then empty), or when the
  // source failed (status() then says why). A block may be empty.
  virtual bool NextBlock(ArrivalBlock& out) = 0;
  // Why the blocks ended early; ok when they did not.
  virtual Status status() const { return Status::Ok(); }
};

}  // namespace wattcut::polca
