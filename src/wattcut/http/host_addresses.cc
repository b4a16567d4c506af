#include "wattcut/http/host_addresses.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>

#include "wattcut/base/printable_text.h"

namespace wattcut::http {

std::string SocketAddress::Text() const {
  char text[INET6_ADDRSTRLEN] = {};
  if (family() == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&storage);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
    return std::string(text) + ":" + std::to_string(ntohs(v4->sin_port));
  }
  if (family() == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&storage);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
    return "[" + std::string(text) + "]:" + std::to_string(ntohs(v6->sin6_port));
  }
  return "(address family " + std::to_string(family()) + ")";
}

Result<std::vector<SocketAddress>> ResolveHost(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const int resolved = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
  if (resolved != 0 || found == nullptr) {
    if (found != nullptr) ::freeaddrinfo(found);
    return Error::Unavailable("cannot resolve host '" + PrintableText(host) +
                              "': " + (resolved != 0 ? ::gai_strerror(resolved) : "no address"));
  }
  std::vector<SocketAddress> addresses;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if ((a->ai_family != AF_INET && a->ai_family != AF_INET6) || a->ai_addrlen > sizeof(sockaddr_storage)) continue;
    SocketAddress address;
    std::memcpy(&address.storage, a->ai_addr, a->ai_addrlen);
    address.length = a->ai_addrlen;
    bool repeated = false;
    for (const SocketAddress& seen : addresses) {
      repeated =
          repeated || (seen.length == address.length && std::memcmp(&seen.storage, &address.storage, seen.length) == 0);
    }
    if (!repeated) addresses.push_back(address);
  }
  ::freeaddrinfo(found);
  if (addresses.empty()) return Error::Unavailable("cannot resolve host '" + PrintableText(host) + "': no TCP address");
  return addresses;
}

}  // namespace wattcut::http
