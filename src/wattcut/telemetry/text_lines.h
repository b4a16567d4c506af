// The lines of a text one at a time, numbered from 1, with LF or CRLF ends, saying whether each
// ended with a newline: a recording cut off (a killed nvidia-smi or curl) ends in a line
// without one, which the readers note and skip instead of refusing the file. A UTF-8 byte order
// mark before the first line (a file saved by a Windows editor) is an encoding marker, not text:
// it is left out, as the CSV reader leaves it out.
#pragma once

#include <string_view>

namespace wattcut::telemetry {

struct TextLine {
  int number = 0;         // 1-based
  std::string_view text;  // without the line end
  bool terminated = false;
};

class TextLines {
 public:
  explicit TextLines(std::string_view text) : text_(text) {}
  // The next line; false at the end of the text.
  bool Next(TextLine& line);

 private:
  std::string_view text_;
  size_t at_ = 0;
  int number_ = 0;
};

}  // namespace wattcut::telemetry
