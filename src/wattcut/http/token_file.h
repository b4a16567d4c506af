// A bearer token kept in a file: `wattcut serve --token-file` (the token every client presents) and
// `wattcut polca control --token-file` (the token the row controller presents to every agent).
#pragma once

#include <string>

#include "wattcut/base/result.h"

namespace wattcut::http {

// Reads the token: the file's first line, surrounding whitespace removed. Fails on an
// unreadable file or an empty token.
Result<std::string> ReadTokenFile(const std::string& path);

}  // namespace wattcut::http
