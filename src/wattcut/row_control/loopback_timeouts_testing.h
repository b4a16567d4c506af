// Test support: the timeouts a row-control client's test gives it for a server on 127.0.0.1, 5 s to
// connect and 10 s a request: ample for a local server, short enough that a hang fails the test.
#pragma once

#include "wattcut/row_control/row_agent_client.h"

namespace wattcut::row_control::testing {

inline AgentTimeouts LoopbackTimeouts() {
  AgentTimeouts timeouts;
  timeouts.connect_timeout_s = 5;
  timeouts.request_timeout_s = 10;
  return timeouts;
}

}  // namespace wattcut::row_control::testing
