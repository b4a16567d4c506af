#include "wattcut/agent/zeusd_clients.h"

namespace wattcut::agent {

void ZeusdClients::Seen(const LeaseHolder& client, uint64_t connection_id) {
  clients_[KeyOf(client)].connections.insert(connection_id);
}

bool ZeusdClients::SeenIfKnown(const LeaseHolder& client, uint64_t connection_id) {
  auto it = clients_.find(KeyOf(client));
  if (it == clients_.end()) return false;  // it holds nothing
  it->second.connections.insert(connection_id);
  return true;
}

void ZeusdClients::ConnectionClosed(uint64_t connection_id, double now_s) {
  for (auto& [client, presence] : clients_) {
    if (presence.connections.erase(connection_id) > 0 && presence.connections.empty()) {
      presence.gone_since_s = now_s;  // the node agent's reaping ends its leases after the grace
    }
  }
}

bool ZeusdClients::Alive(const LeaseHolder& client, double now_s, double grace_s) const {
  auto it = clients_.find(KeyOf(client));
  return it != clients_.end() && (!it->second.connections.empty() || now_s - it->second.gone_since_s < grace_s);
}

void ZeusdClients::ForgetIdle(const std::vector<Lease>& leases) {
  for (auto it = clients_.begin(); it != clients_.end();) {
    bool holds = false;
    for (const Lease& lease : leases) {
      holds = holds || (lease.holder.kind == LeaseHolder::Kind::kZeusdClient && KeyOf(lease.holder) == it->first);
    }
    it = holds || !it->second.connections.empty() ? std::next(it) : clients_.erase(it);
  }
}

}  // namespace wattcut::agent
