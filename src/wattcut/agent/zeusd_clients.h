// The zeusd clients over TCP that the node agent knows (LeaseHolder::ZeusdClient: a token's user
// at a peer address), with their open connections. Such a client's implicit lease lives while it
// has a connection open, and for a grace after its last one closed: an HTTP client recycles
// connections (httpx closes one idle for 5 s when it next asks), and the new one, from the same
// user and address, carries the lease on. Not thread-safe: the node agent owns it under its lock.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "wattcut/agent/lease_table.h"

namespace wattcut::agent {

class ZeusdClients {
 public:
  // `client` asked on `connection_id` (it may now take a lease).
  void Seen(const LeaseHolder& client, uint64_t connection_id);
  // The same, for a client already known only; false (nothing changes) for one that is not.
  bool SeenIfKnown(const LeaseHolder& client, uint64_t connection_id);
  // A TCP connection closed at `now_s` (steady): a client left with none starts its grace.
  void ConnectionClosed(uint64_t connection_id, double now_s);
  // Whether `client` has a connection open, or closed its last less than `grace_s` ago.
  bool Alive(const LeaseHolder& client, double now_s, double grace_s) const;
  // Forgets the clients with no open connection that hold none of `leases`.
  void ForgetIdle(const std::vector<Lease>& leases);

 private:
  using Key = std::pair<std::string, std::string>;  // (the token's user, the peer's address)
  static Key KeyOf(const LeaseHolder& client) { return {client.zeusd_sub, client.peer_address}; }
  struct Presence {
    std::set<uint64_t> connections;
    double gone_since_s = 0;
  };
  std::map<Key, Presence> clients_;
};

}  // namespace wattcut::agent
