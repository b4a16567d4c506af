#include "wattcut/runtime/schedule_cursor.h"

#include <nlohmann/json.hpp>

#include "wattcut/base/json_object.h"

namespace wattcut {

Result<RankSchedule> ParseRankScheduleJson(std::string_view json, int expected_rank) {
  const nlohmann::json doc = ParseJsonOrDiscarded(json);
  if (doc.is_discarded()) return Error{"schedule: not valid JSON"};
  if (!doc.is_object()) return Error{"schedule: expected a JSON object {\"rank\": N, \"frequencies\": [...]}"};
  if (!doc.contains("rank") || !doc["rank"].is_number_integer()) return Error{"schedule: missing integer \"rank\""};
  RankSchedule out;
  out.rank = doc["rank"].get<int>();
  if (expected_rank >= 0 && out.rank != expected_rank) {
    return Error{"schedule: it is for rank " + std::to_string(out.rank) + ", this is rank " +
                 std::to_string(expected_rank)};
  }
  if (!doc.contains("frequencies") || !doc["frequencies"].is_array()) {
    return Error{"schedule: missing array \"frequencies\""};
  }
  const auto& list = doc["frequencies"];
  for (size_t i = 0; i < list.size(); ++i) {
    const auto& item = list[i];
    const std::string where = "schedule: frequencies[" + std::to_string(i) + "]";
    if (!item.is_array() || item.size() != 2 || !item[0].is_string() || !item[1].is_number_integer()) {
      return Error{where + ": expected [\"instruction\", MHz]"};
    }
    const int freq = item[1].get<int>();
    if (freq <= 0) return Error{where + ": frequency must be positive, got " + std::to_string(freq)};
    out.entries.push_back({item[0].get<std::string>(), freq});
  }
  if (out.entries.empty()) return Error{"schedule: \"frequencies\" is empty"};
  return out;
}

ScheduleCursor::ScheduleCursor(std::vector<ScheduleEntry> schedule) : schedule_(std::move(schedule)) {}

void ScheduleCursor::TakePending() {
  if (!has_pending_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(pending_mutex_);
  if (pending_) {
    schedule_ = std::move(*pending_);
    pending_.reset();
  }
  has_pending_.store(false, std::memory_order_release);
}

Result<int> ScheduleCursor::OnInstructionBegin(std::string_view instruction) {
  if (position_ == 0) TakePending();  // between steps: a step boundary
  if (position_ >= schedule_.size()) {
    return Error{"schedule: the step ran more instructions than the plan's " + std::to_string(schedule_.size()) +
                 " (extra '" + std::string(instruction) + "')"};
  }
  const ScheduleEntry& entry = schedule_[position_];
  if (entry.instruction != instruction) {
    return Error{"schedule: instruction " + std::to_string(position_ + 1) + " of " + std::to_string(schedule_.size()) +
                 " is '" + entry.instruction + "' in the plan, but the job ran '" + std::string(instruction) + "'"};
  }
  ++position_;
  return entry.freq_mhz;
}

Status ScheduleCursor::OnStepEnd() {
  const size_t consumed = position_;
  const size_t planned = schedule_.size();
  position_ = 0;
  ++steps_;
  TakePending();
  if (consumed != planned) {
    return Error{"schedule: the step ended after " + std::to_string(consumed) + " of the plan's " +
                 std::to_string(planned) + " instructions"};
  }
  return Status::Ok();
}

void ScheduleCursor::SetNextSchedule(std::vector<ScheduleEntry> schedule) {
  std::lock_guard lock(pending_mutex_);
  pending_ = std::move(schedule);
  has_pending_.store(true, std::memory_order_release);
}

}  // namespace wattcut
