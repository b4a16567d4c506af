// Test support: a whole file's bytes, for tests that check what a program wrote.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace wattcut::testing {

// The file's contents, or "" when it cannot be opened.
inline std::string ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace wattcut::testing
