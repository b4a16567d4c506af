// Whether zeusd's API answers a request at all (zeusd_routes.h, steps 1 and 2): the path's API
// group enabled, and, with a signing key, a valid token holding the group as a scope; without one,
// over TCP, loopback peers only and no setters.
#pragma once

#include <optional>
#include <string>

#include <httplib.h>

#include "wattcut/agent/agent_caller.h"
#include "wattcut/agent/zeusd_routes.h"
#include "wattcut/agent/zeusd_token.h"

namespace wattcut::agent {

// The API group of a path (gpu-control: /gpu/set_*, /gpu/reset_*; gpu-read: other /gpu/;
// cpu-read: /cpu/); nullopt for the paths of no group (/discover, /time, /auth/).
std::optional<ZeusdGroup> GroupOf(const std::string& path);
bool Enabled(const ZeusdApiContext& z, ZeusdGroup group);

// The token's claims when there is a key, or the refusal answered as zeusd answers it.
struct Admission {
  bool admitted = false;
  std::optional<ZeusdClaims> claims;
};
Admission Admit(const ZeusdApiContext& z, AgentTransport transport, const httplib::Request& req,
                httplib::Response& res);

}  // namespace wattcut::agent
