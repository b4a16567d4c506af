// Who asks the node agent, and what it may do: the Unix socket's peer credentials, or a TCP
// bearer token and connection, with the scopes each grants (docs/agent.md, "Who may do what").
#pragma once

#include <optional>
#include <string>

#include "wattcut/agent/agent_tokens.h"
#include "wattcut/agent/node_agent.h"
#include "wattcut/http/bounded_http_server.h"

namespace wattcut::agent {

enum class AgentTransport { kUnixSocket, kTcp };

// Who asks, and what it may do.
struct AgentCaller {
  LeaseHolder holder;
  bool read = false;
  bool train = false;
  bool row = false;
  bool admin = false;  // root on the Unix socket: registers and ends batch jobs
  bool Allows(AgentScope scope) const;
};

// The caller of a request on `transport` (the connection comes from BoundedHttpServer), or the
// refusal: 401 for a missing or unknown token where one is needed (or a job's credential after the
// job ended, or over TCP), 403 for a TCP peer beyond loopback on an agent without tokens. On the
// Unix socket a bearer token is either one of the token file's or a batch job's credential
// (`node`'s jobs; nullptr: none): the caller then holds leases as the job's process.
struct Refusal {
  int status = 0;
  std::string message;
};
std::optional<Refusal> IdentifyCaller(AgentTransport transport, const http::ConnectionInfo& connection,
                                      const std::string& authorization, const AgentTokens* tokens, NodeAgent* node,
                                      AgentCaller& caller);

}  // namespace wattcut::agent
