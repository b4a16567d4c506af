#include "wattcut/telemetry/text_lines.h"

namespace wattcut::telemetry {

bool TextLines::Next(TextLine& line) {
  if (at_ == 0 && number_ == 0 && text_.starts_with("\xEF\xBB\xBF")) at_ = 3;
  if (at_ >= text_.size()) return false;
  const size_t end = text_.find('\n', at_);
  line.number = ++number_;
  line.terminated = end != std::string_view::npos;
  line.text = text_.substr(at_, (line.terminated ? end : text_.size()) - at_);
  if (!line.text.empty() && line.text.back() == '\r') line.text.remove_suffix(1);
  at_ = line.terminated ? end + 1 : text_.size();
  return true;
}

}  // namespace wattcut::telemetry
