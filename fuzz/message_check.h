// What every fuzz target asserts of an error message: it is not empty and holds no byte
// a terminal would act on (C0 controls other than tab and newline, DEL), since the CLI
// prints it and the server returns it. A violation traps, which libFuzzer and the replay
// test both report.
#pragma once

#include <string_view>

namespace wattcut::fuzz {

inline void CheckMessage(std::string_view message) {
  if (message.empty()) __builtin_trap();
  for (unsigned char c : message) {
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) __builtin_trap();
  }
}

}  // namespace wattcut::fuzz
