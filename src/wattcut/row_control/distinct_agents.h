// One agent named twice in a row file (`127.0.0.1:7788` and `localhost:7788`, or a node's name and
// its address) would count its server's power twice. The row file refuses the same URL twice;
// this refuses two URLs that reach one agent: each agent's host is resolved, and two servers that
// share an address and port are refused, naming both lines and the address.
#pragma once

#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/http/host_addresses.h"
#include "wattcut/row_control/row_file.h"

namespace wattcut::row_control {

// `path`: the row file, for messages. `resolver`: ResolveHost when empty (a name that does not
// resolve is an error naming its line: the controller could not read that server anyway).
Status CheckEachAgentOnce(const std::vector<RowServer>& servers, const std::string& path,
                          const http::HostResolver& resolver = nullptr);

}  // namespace wattcut::row_control
