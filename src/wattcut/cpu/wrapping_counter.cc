#include "wattcut/cpu/wrapping_counter.h"

namespace wattcut::cpu {

int64_t WrappingCounter::Widen(int64_t raw) {
  if (!started_) {
    started_ = true;
    total_ = raw;
  } else if (raw >= last_raw_) {
    total_ += raw - last_raw_;
  } else {
    total_ += range_ - last_raw_ + raw;
    ++wraps_;
  }
  last_raw_ = raw;
  return total_;
}

}  // namespace wattcut::cpu
