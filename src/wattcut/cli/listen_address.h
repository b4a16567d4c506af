// `--listen HOST:PORT` of the commands that serve (serve, agent): the host (brackets of an IPv6
// address removed) and the port (0: any free port).
#pragma once

#include <string>
#include <utility>

#include "wattcut/base/result.h"

namespace wattcut::cli {

Result<std::pair<std::string, int>> SplitListen(const std::string& listen);

}  // namespace wattcut::cli
