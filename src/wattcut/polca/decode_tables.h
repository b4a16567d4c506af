// The token phase of one server at given GPU limits, per batch size 0..max_batch: decode
// iterations per second and the server's watts. Every server of a row at the same limits reads
// one shared table, computed once when the first of them moves to those limits, instead of each
// server holding (and recomputing at every lock) two tables of its own: a row's servers then fit
// in the CPU's cache to a much larger row (issue 28: a day's cost linear in servers).
//
// The numbers are those InferencePowerModel gives, by the same expressions: sharing changes no
// answer (row_simulator_fingerprint_test).
//
// Ownership: DecodeTables owns every table; a DecodeTableLease holds one for one server and
// gives it back when the server moves to other limits or goes away. A table no lease holds is
// kept for the next server that asks (a lock toggles between the same few limits) until
// kMaxIdleTables are idle, when the oldest idle one is reused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "wattcut/polca/control_actuation.h"
#include "wattcut/polca/inference_power_model.h"

namespace wattcut::polca {

struct DecodeStep {
  double iterations_per_s = 0;  // at this batch size (0 for an empty batch)
  double server_w = 0;
};

class DecodeTables {
 public:
  static constexpr size_t kMaxIdleTables = 64;

  DecodeTables(const InferencePowerModel& model, int max_batch);
  DecodeTables(const DecodeTables&) = delete;
  DecodeTables& operator=(const DecodeTables&) = delete;

  // Tables computed (each distinct limits once while kept), for tests.
  int64_t tables_computed() const { return computed_; }
  // Tables held by at least one lease.
  size_t tables_in_use() const { return tables_.size() - idle_count_; }
  size_t tables_kept() const { return tables_.size(); }

 private:
  friend class DecodeTableLease;
  struct Table {
    DecodeTables* owner = nullptr;  // a lease gives the table back to it
    GpuLimits limits;
    std::vector<DecodeStep> steps;  // by batch size, 0..max_batch
    int64_t leases = 0;
    bool listed_idle = false;  // in idle_
  };
  using Key = std::pair<double, double>;  // (freq_mhz, cap_w)

  Table* Acquire(const GpuLimits& limits);
  void Release(Table* table);
  void Fill(Table& table);

  const InferencePowerModel& model_;
  int max_batch_;
  std::deque<Table> tables_;  // stable addresses
  std::map<Key, Table*> by_limits_;
  std::deque<Table*> idle_;  // released to no lease, oldest first (some may be leased again since)
  size_t idle_count_ = 0;    // tables held by no lease
  int64_t computed_ = 0;
};

// One server's table: the steps at its current limits. Movable, not copyable. One pointer (a
// server's state is three cache lines, polca/server_model.h): the table knows its limits and owner.
class DecodeTableLease {
 public:
  DecodeTableLease(DecodeTables& tables, const GpuLimits& limits);
  ~DecodeTableLease();
  DecodeTableLease(DecodeTableLease&& other) noexcept;
  DecodeTableLease& operator=(DecodeTableLease&& other) noexcept;
  DecodeTableLease(const DecodeTableLease&) = delete;
  DecodeTableLease& operator=(const DecodeTableLease&) = delete;

  // Moves to the table at `limits` (the new one is taken before the old one is given back).
  void Reset(const GpuLimits& limits);
  const DecodeStep& at(size_t batch) const { return table_->steps[batch]; }
  // The limits the table is for.
  const GpuLimits& limits() const { return table_->limits; }

 private:
  DecodeTables::Table* table_;
};

}  // namespace wattcut::polca
