#include "wattcut/agent/zeusd_admission.h"

#include <algorithm>

#include "wattcut/agent/agent_answer.h"
#include "wattcut/base/unix_time.h"

namespace wattcut::agent {

std::optional<ZeusdGroup> GroupOf(const std::string& path) {
  if (path.rfind("/gpu/set_", 0) == 0 || path.rfind("/gpu/reset_", 0) == 0) return ZeusdGroup::kGpuControl;
  if (path.rfind("/gpu/", 0) == 0) return ZeusdGroup::kGpuRead;
  if (path.rfind("/cpu/", 0) == 0) return ZeusdGroup::kCpuRead;
  return std::nullopt;
}

bool Enabled(const ZeusdApiContext& z, ZeusdGroup group) {
  return std::find(z.enabled_groups.begin(), z.enabled_groups.end(), group) != z.enabled_groups.end();
}

Admission Admit(const ZeusdApiContext& z, AgentTransport transport, const httplib::Request& req,
                httplib::Response& res) {
  const std::optional<ZeusdGroup> group = GroupOf(req.path);
  if (group && !Enabled(z, *group)) {
    AnswerZeusdError(res, 404,
                     "API group '" + std::string(ZeusdGroupName(*group)) + "' is not enabled on this server.");
    return {};
  }
  if (z.signing_key == nullptr) {
    if (req.path.rfind("/auth/", 0) == 0) {
      AnswerZeusdError(res, 404, "Authentication is not enabled on this server.");
      return {};
    }
    const http::ConnectionInfo* connection = http::BoundedHttpServer::CurrentConnection();
    if (transport == AgentTransport::kTcp && (connection == nullptr || !connection->loopback)) {
      AnswerZeusdError(res, 403,
                       "this agent has no --zeusd-signing-key: over TCP its zeusd API answers loopback peers only");
      return {};
    }
    if (transport == AgentTransport::kTcp && group == ZeusdGroup::kGpuControl) {
      AnswerZeusdError(res, 403,
                       "this agent has no --zeusd-signing-key: over TCP zeusd's setters need a token (or use the "
                       "Unix socket)");
      return {};
    }
    return {true, std::nullopt};
  }
  if (req.path == "/discover" || req.path == "/time") return {true, std::nullopt};
  const std::string authorization = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  auto unauthorized = [&res](const std::string& message) {
    res.set_header("WWW-Authenticate", "Bearer realm=\"zeusd\"");
    AnswerZeusdError(res, 401, message);
    return Admission{};
  };
  if (authorization.rfind(kBearer, 0) != 0) {
    return unauthorized("Authentication required. Provide an Authorization: Bearer <token> header.");
  }
  const int64_t now_s = UnixNowMs() / 1000;
  Result<ZeusdClaims> claims =
      VerifyZeusdToken(std::string_view(authorization).substr(kBearer.size()), *z.signing_key, now_s);
  if (!claims.ok()) return unauthorized(claims.error().message);
  if (group && !claims->Has(*group)) {
    std::string held;
    for (ZeusdGroup g : claims->scopes) held += (held.empty() ? "'" : ", '") + std::string(ZeusdGroupName(g)) + "'";
    AnswerZeusdError(res, 403,
                     "Token for user '" + claims->sub + "' lacks required scope '" +
                         std::string(ZeusdGroupName(*group)) + "'. Token scopes: [" + held + "]");
    return {};
  }
  return {true, *claims};
}

}  // namespace wattcut::agent
