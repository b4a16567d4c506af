// One inference server (one model replica on all its GPUs) serving requests with
// iteration-level ("continuous") batching, simulated event by event:
//
//  * Arriving requests wait in FIFO order. Whenever the batch has room, the waiting
//    requests that fit (up to max_batch in the batch, up to max_prefill_tokens per
//    prefill, at least one) run one prompt (prefill) phase together; decoding pauses
//    meanwhile, as in vLLM-style schedulers. The prefill produces each request's first
//    token.
//  * Between prefills the batch decodes: every iteration produces one token for every
//    request in the batch; a request leaves after its last generated token. Iteration
//    time depends on the batch size, so the server only needs an event when the batch
//    changes (a prefill ends, a request finishes) or its clock changes: decoding is
//    tracked as a fractional iteration count, never token by token.
//  * Power is piecewise constant: idle, prompt phase (by prefill tokens) or token phase
//    (by batch), all at the effective clock (lock, brake, or the clock a power cap
//    allows; a cap bites on a prefill only after power_cap_response_s).
//
// Callers drive it in time order: Arrive(), SetLimits() and HandleEvent() at
// next_event_s(), never going back in time.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <vector>

#include "wattcut/base/huge_page_allocator.h"
#include "wattcut/polca/arrival_source.h"
#include "wattcut/polca/control_actuation.h"
#include "wattcut/polca/decode_tables.h"
#include "wattcut/polca/inference_power_model.h"
#include "wattcut/polca/polca_config.h"

namespace wattcut::polca {

// Completed requests of one priority class.
struct ServedLog {
  // Arrival to last token, in completion order: a day of a large row is hundreds of MB, written
  // end to end (huge pages: base/huge_page_allocator.h).
  std::vector<double, HugePageAllocator<double>> latency_s;
  int64_t generated_tokens = 0;
  double busy_server_s = 0;  // time servers of this class spent not idle
};

// What a serving engine's metrics would count on one server (vLLM's counters), up to a time: the
// input telemetry synthesis writes out (polca/telemetry_synthesis.h).
struct ServerCounters {
  double prompt_tokens = 0;  // of prefills that ended
  int64_t first_tokens = 0;  // requests whose prefill ended (each gets its first token there)
  int64_t finished = 0;      // requests that left
  double decode_tokens = 0;  // tokens of decode iterations (fractional within an iteration)
  // Engine steps (vLLM's vllm:iteration_tokens_total_count): one per prefill that ended and one per
  // decode iteration (fractional within an iteration).
  double steps = 0;
};

// What every inference server of a row reads, held once for the row: a server reaches it through
// one pointer instead of holding 32 bytes of copies (see the layout below). It owns the row's
// decode tables, made for the same model and batch limit, and must outlive the servers made
// with it. Only the tables change (servers lease them); the rest is constant.
struct InferenceServerSettings {
  InferenceServerSettings(const InferencePowerModel& power_model, const PolcaConfig& config);
  InferenceServerSettings(const InferenceServerSettings&) = delete;
  InferenceServerSettings& operator=(const InferenceServerSettings&) = delete;

  const InferencePowerModel& model;
  double cap_response_s;  // a power cap bites on a prefill this long after it starts
  double idle_w;          // the server's power when idle
  int max_batch;
  int max_prefill_tokens;
  // The token phase's steps at each limits in use, shared by the row's servers.
  mutable DecodeTables decode;
};

// Whether a server keeps a serving engine's counters (ServerCounters). Telemetry synthesis reads
// them; a row's servers do not, and spend neither memory in their hot lines nor time on them.
enum class EngineCounters : uint8_t { kOff, kKept };

class alignas(64) InferenceServer {
 public:
  InferenceServer(const InferenceServerSettings& settings, Priority priority,
                  EngineCounters counters = EngineCounters::kOff);

  Priority priority() const { return priority_; }
  // Requests waiting, in prefill or decoding.
  int outstanding() const { return outstanding_; }
  double power_w() const { return power_w_; }
  // One GPU's share of power_w() (every GPU of a server draws the same in this model).
  double gpu_power_w() const { return settings_->model.GpuW(power_w_); }
  // Requests waiting, in the current prefill, and decoding.
  int waiting() const { return outstanding_ - static_cast<int>(decoding_count_ + prefill_count_); }
  int in_prefill() const { return static_cast<int>(prefill_count_); }
  int decoding() const { return static_cast<int>(decoding_count_); }
  // The clock the GPUs run at now (the lock; a cap's clock during a phase it bites on is not shown).
  double freq_mhz() const { return decode_.limits().freq_mhz; }
  // The counters at t_s (>= the last event handled), decode progress since then included; all
  // zero for a server made with EngineCounters::kOff.
  ServerCounters counters(double t_s) const;
  double next_event_s() const { return next_event_s_; }
  // The first line of the server's batch (the next decode step's first read), for a caller that
  // asks the cache for it before the event: the address is fixed for the server's life.
  const void* batch_front() const { return batch_.get(); }

  void Arrive(const Arrival& arrival, double t_s);
  void SetLimits(const GpuLimits& limits, double t_s);
  // Handles the event due at next_event_s() (t_s must equal it).
  void HandleEvent(double t_s, ServedLog& log);
  // Adds busy time up to t_s to the log (at the end of a run).
  void Finish(double t_s, ServedLog& log);

 private:
  enum class Phase : uint8_t { kIdle, kPrefill, kDecode };
  struct Waiting {
    double arrival_s;
    int32_t context_tokens;
    int32_t generated_tokens;
  };
  // A request of the batch: decoding (finish_iteration set), or in the prefill.
  struct Batched {
    double finish_iteration;
    double arrival_s;
    int32_t generated_tokens;
    bool operator>(const Batched& o) const { return finish_iteration > o.finish_iteration; }
  };
  // The batch's buffer starts on a cache line: its first five requests lie in two lines, not
  // (at malloc's 16-byte alignment) often in three.
  static constexpr std::align_val_t kBatchAlignment{64};
  struct BatchDelete {
    void operator()(Batched* batch) const { ::operator delete(batch, kBatchAlignment); }
  };
  // Requests waiting for room in the batch, in arrival order from `head`. One vector, its
  // consumed front dropped now and then: no 512-byte block, as a std::deque holds even when
  // empty.
  struct WaitingQueue {
    static constexpr size_t kCompactAt = 256;
    std::vector<Waiting> requests;
    uint32_t head = 0;
    // After requests were taken from the front (head moved on): drops them when none is left,
    // or when they are at least half the vector.
    void DropTaken();
  };

  void StartPrefill(double t_s);
  void BeginPrefill(double t_s);
  void StartDecodeOrIdle(double t_s, ServedLog& log);
  void AdvanceDecode(double t_s);
  void AdvancePrefill(double t_s);
  void RefreshPrefill(double t_s);
  void BecomeBusy(double t_s);
  void BecomeIdle(double t_s, ServedLog& log);

  // The members in the order events read them, in two cache lines, the object aligned to one: what
  // every event reads in the first (all that a decode step reads, unless the server then goes idle
  // or starts a prefill), what a prefill's start and end, an arrival and a change between busy and
  // idle read in the second. A 2,560-server row's servers outgrow the core's L2 cache, and each
  // line an event touches is then a miss: a 272-byte object at any offset was four to five of them,
  // 256 bytes in four lines four, 192 in three three. The row's constants are behind settings_, the
  // limits are the decode table's; what only some servers need (the waiting queue, the engine's
  // counters) is behind a pointer, made when first needed.
  //
  // The batch is one buffer of max_batch requests: the decoding ones first, a min-heap on
  // finish_iteration, then the prefill's. A prefill never holds more than the room the
  // decoding ones leave, and decoding pauses during a prefill, so the two never meet; a
  // prefill's requests are already at the heap's end when it ends. An arrival that finds the
  // batch open and no one waiting (93 % of a day's arrivals at the built-in load) goes straight
  // into it: its request is written and read in the lines the batch's events touch anyway,
  // never in the waiting queue's buffer, which was a line of its own (and a miss, in a row
  // larger than the cache) at the arrival and again at the prefill's end.

  // Line 1: every event.
  double next_event_s_ = std::numeric_limits<double>::infinity();
  double power_w_ = 0;
  double iterations_ = 0;  // decode iterations done so far (fractional)
  // The progress of the phase is counted up to here: decode iterations (and decode tokens) in
  // a decode, prefill work in a prefill.
  double phase_since_s_ = 0;
  std::unique_ptr<Batched[], BatchDelete> batch_;  // max_batch requests: see above
  DecodeTableLease decode_;                        // the token phase's steps at the server's limits, and the limits
  uint32_t decoding_count_ = 0;                    // batch_[0, decoding_count_): the decoding heap
  uint32_t prefill_count_ = 0;                     // then the prefill's (0 outside a prefill)
  // Requests waiting, in prefill or decoding.
  int outstanding_ = 0;
  Phase phase_ = Phase::kIdle;
  Priority priority_;
  bool prefill_cap_pending_ = false;  // a cap will bite at prefill_started + cap_response_s
  bool counting_;                     // counters_ is kept (asked here: the pointer is in line 2)

  // Line 2: a prefill, an arrival, busy and idle.
  const InferenceServerSettings* settings_;
  std::unique_ptr<ServerCounters> counters_;  // up to the last event (decode tokens up to phase_since_s_)
  std::unique_ptr<WaitingQueue> waiting_;     // made when a request first waits
  double busy_since_s_ = 0;
  double prefill_started_s_ = 0;
  double prefill_tokens_ = 0;
  double prefill_work_s_ = 0;  // remaining prefill time at max clock
  double prefill_slowdown_ = 1;
};

}  // namespace wattcut::polca
