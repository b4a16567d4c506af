#include "wattcut/cli/listen_address.h"

#include <stdexcept>

#include "wattcut/base/printable_text.h"

namespace wattcut::cli {

Result<std::pair<std::string, int>> SplitListen(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    return Error{"--listen: expected HOST:PORT, got '" + PrintableText(listen) + "'"};
  }
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  int port = 0;
  try {
    size_t used = 0;
    port = std::stoi(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    return Error{"--listen: port must be a number, got '" + PrintableText(listen.substr(colon + 1)) + "'"};
  }
  if (port < 0 || port > 65535) return Error{"--listen: port out of range [0, 65535]"};
  return std::make_pair(host, port);
}

}  // namespace wattcut::cli
