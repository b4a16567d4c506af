#include "wattcut/row_control/distinct_agents.h"

#include <map>

#include "wattcut/http/service_url.h"

namespace wattcut::row_control {

Status CheckEachAgentOnce(const std::vector<RowServer>& servers, const std::string& path,
                          const http::HostResolver& resolver) {
  const http::HostResolver resolve = resolver ? resolver : http::HostResolver(http::ResolveHost);
  std::map<std::string, const RowServer*> reached;  // "ADDRESS:PORT" -> the first server there
  for (const RowServer& server : servers) {
    const std::string where = path + ":" + std::to_string(server.line) + ": server '" + server.name + "': ";
    auto url = http::SplitServiceUrl(server.agent_url, "agent URL");
    if (!url.ok()) return url.error().WithContext(where);
    auto addresses = resolve(url->host, url->port);
    if (!addresses.ok()) return addresses.error().WithContext(where + "agent " + server.agent_url + ": ");
    for (const http::SocketAddress& address : *addresses) {
      auto [first, fresh] = reached.emplace(address.Text(), &server);
      if (fresh || first->second == &server) continue;
      return Error::InvalidArgument(where + "agent " + server.agent_url + " is the agent of line " +
                                    std::to_string(first->second->line) + " (server '" + first->second->name + "', " +
                                    first->second->agent_url + "): both reach " + address.Text() +
                                    "; its power would count twice");
    }
  }
  return Status::Ok();
}

}  // namespace wattcut::row_control
