#include "wattcut/polca/decode_tables.h"

#include <algorithm>

namespace wattcut::polca {

DecodeTables::DecodeTables(const InferencePowerModel& model, int max_batch) : model_(model), max_batch_(max_batch) {}

void DecodeTables::Fill(Table& table) {
  table.steps.assign(static_cast<size_t>(max_batch_) + 1, DecodeStep{});
  for (int b = 1; b <= max_batch_; ++b) {
    double f = table.limits.freq_mhz;
    if (table.limits.cap_w > 0) f = std::min(f, model_.TokenFreqUnderCap(b, table.limits.cap_w));
    table.steps[static_cast<size_t>(b)] = {1.0 / (model_.TokenIterationSeconds(b) * model_.TokenSlowdown(f)),
                                           model_.ServerTokenW(b, f)};
  }
  ++computed_;
}

DecodeTables::Table* DecodeTables::Acquire(const GpuLimits& limits) {
  const Key key{limits.freq_mhz, limits.cap_w};
  if (auto found = by_limits_.find(key); found != by_limits_.end()) {
    Table* table = found->second;
    if (table->leases++ == 0) --idle_count_;
    return table;
  }
  Table* table = nullptr;
  if (idle_count_ > kMaxIdleTables) {
    // The oldest table no lease holds; entries leased again since they were listed are dropped.
    while (table == nullptr) {
      Table* oldest = idle_.front();
      idle_.pop_front();
      oldest->listed_idle = false;
      if (oldest->leases == 0) table = oldest;
    }
    by_limits_.erase({table->limits.freq_mhz, table->limits.cap_w});
    --idle_count_;
  } else {
    table = &tables_.emplace_back();
    table->owner = this;
  }
  table->limits = limits;
  table->leases = 1;
  Fill(*table);
  by_limits_.emplace(key, table);
  return table;
}

void DecodeTables::Release(Table* table) {
  if (--table->leases > 0) return;
  ++idle_count_;
  if (!table->listed_idle) {
    table->listed_idle = true;
    idle_.push_back(table);
  }
}

DecodeTableLease::DecodeTableLease(DecodeTables& tables, const GpuLimits& limits) : table_(tables.Acquire(limits)) {}

DecodeTableLease::~DecodeTableLease() {
  if (table_ != nullptr) table_->owner->Release(table_);
}

DecodeTableLease::DecodeTableLease(DecodeTableLease&& other) noexcept : table_(other.table_) { other.table_ = nullptr; }

DecodeTableLease& DecodeTableLease::operator=(DecodeTableLease&& other) noexcept {
  if (this != &other) {
    if (table_ != nullptr) table_->owner->Release(table_);
    table_ = other.table_;
    other.table_ = nullptr;
  }
  return *this;
}

void DecodeTableLease::Reset(const GpuLimits& limits) {
  DecodeTables* tables = table_->owner;
  DecodeTables::Table* next = tables->Acquire(limits);
  tables->Release(table_);
  table_ = next;
}

}  // namespace wattcut::polca
