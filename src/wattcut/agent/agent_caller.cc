#include "wattcut/agent/agent_caller.h"

#include "wattcut/http/bearer_token.h"

namespace wattcut::agent {

bool AgentCaller::Allows(AgentScope scope) const {
  switch (scope) {
    case AgentScope::kRead:
      return read;
    case AgentScope::kTrain:
      return train;
    case AgentScope::kRow:
      return row;
  }
  return false;
}

std::optional<Refusal> IdentifyCaller(AgentTransport transport, const http::ConnectionInfo& connection,
                                      const std::string& authorization, const AgentTokens* tokens, NodeAgent* node,
                                      AgentCaller& caller) {
  std::optional<AgentTokens::Match> token;
  std::optional<JobTable::CredentialMatch> job;
  if (!authorization.empty()) {
    const std::optional<std::string_view> presented = http::BearerCredentials(authorization);
    if (tokens != nullptr && presented) token = tokens->Find(*presented);
    if (!token && presented && node != nullptr) job = node->JobOfCredential(*presented);
    if (job && job->ended) {
      return Refusal{401, "the credential of job " + job->job_id + " stopped working when the job ended"};
    }
    if (job && transport == AgentTransport::kTcp) {
      return Refusal{401, "a job's credential works only on the agent's Unix socket (it is bound to the job's uid)"};
    }
    if (!token && !job) return Refusal{401, "invalid bearer token"};
  }
  auto grant = [&caller](AgentScope scope) {
    caller.read = caller.read || ScopeAllows(scope, AgentScope::kRead);
    caller.train = caller.train || ScopeAllows(scope, AgentScope::kTrain);
    caller.row = caller.row || ScopeAllows(scope, AgentScope::kRow);
  };
  if (transport == AgentTransport::kUnixSocket) {
    caller.holder = LeaseHolder::Process(connection.pid, connection.uid);
    if (job) caller.holder.job_id = job->job_id;
    grant(AgentScope::kTrain);
    if (connection.uid == 0) grant(AgentScope::kRow);
    caller.admin = connection.uid == 0;
    if (token) grant(token->scope);
    return std::nullopt;
  }
  if (tokens == nullptr) {
    if (!connection.loopback) {
      return Refusal{403, "this agent has no --token-file: over TCP it answers only loopback read requests"};
    }
    caller.holder = LeaseHolder::Connection(0, connection.id, connection.peer_address);
    grant(AgentScope::kRead);
    return std::nullopt;
  }
  if (!token) return Refusal{401, "missing 'Authorization: Bearer <token>' header"};
  caller.holder = LeaseHolder::Connection(token->line, connection.id, connection.peer_address);
  grant(token->scope);
  return std::nullopt;
}

}  // namespace wattcut::agent
