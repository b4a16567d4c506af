// The socket addresses a host stands for: what a client tries, in order, until one connects.
//
// A host name often has several: Debian's /etc/hosts maps "localhost" to ::1 and 127.0.0.1, a GPU
// node has an IPv6 and an IPv4 address or one per interface. getaddrinfo sorts them (RFC 6724,
// /etc/gai.conf), and a client that takes only the first counts a healthy server as unreachable
// while that one address refuses. ConcurrentRequests tries them in this order; libcurl
// (HttpClient) and cpp-httplib's client (the rank's planning-server client) try every address
// themselves, and so does Python's socket.create_connection (urllib).
#pragma once

#include <sys/socket.h>

#include <functional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::http {

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  int family() const { return storage.ss_family; }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  // "127.0.0.1:7788" or "[::1]:7788", for messages.
  std::string Text() const;
};

// Every TCP address of `host` (a name, an IPv4 address or an IPv6 one without brackets) at
// `port` (digits), in the resolver's order, without repeats. Blocks while a name is looked up.
// kUnavailable when the name does not resolve ("cannot resolve host 'gpu-a01': Name or service
// not known").
Result<std::vector<SocketAddress>> ResolveHost(const std::string& host, const std::string& port);

// What a client calls to resolve a host: ResolveHost, or in tests a fixed list of addresses.
using HostResolver =
    std::function<Result<std::vector<SocketAddress>>(const std::string& host, const std::string& port)>;

}  // namespace wattcut::http
