// Input text made safe to quote in a message printed to a terminal: a reader that says
// "got '...'" about a field of a file must not send the file's escape sequences (ESC, NUL,
// carriage returns, C1 controls) to the user's terminal, nor a megabyte-long field.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace wattcut {

// The longest quoted value most messages show, in characters.
inline constexpr size_t kQuotedValueMaxChars = 80;

// `text` with every control byte (0x00-0x1F, 0x7F), every C1 control character (U+0080-U+009F
// as UTF-8) and every byte that is not part of valid UTF-8 written as \xNN; other text, UTF-8
// included, is kept. When `text` has more than `max_chars` characters, the first `max_chars`
// are kept and "..." is appended. PrintableText("a\x1b[2Jb") == "a\\x1b[2Jb".
std::string PrintableText(std::string_view text, size_t max_chars = kQuotedValueMaxChars);

}  // namespace wattcut
