#include "wattcut/http/held_connections.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace wattcut::http::testing {

HeldConnections HeldConnections::OnTcp(int port, int idle, int partial) {
  HeldConnections held;
  held.Open(idle, partial, "", port);
  return held;
}

HeldConnections HeldConnections::OnUnixSocket(const std::string& path, int idle, int partial) {
  HeldConnections held;
  held.Open(idle, partial, path, 0);
  return held;
}

HeldConnections::HeldConnections(HeldConnections&& other) noexcept : fds_(std::move(other.fds_)) { other.fds_.clear(); }

HeldConnections::~HeldConnections() {
  for (int fd : fds_) ::close(fd);
}

void HeldConnections::Open(int idle, int partial, const std::string& unix_path, int port) {
  static const char kPartial[] = "GET /v1/readings HTTP/1.1\r\nHost: held\r\nX-Never-Ends: ";
  for (int i = 0; i < idle + partial; ++i) {
    int fd = -1;
    if (!unix_path.empty()) {
      fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_un at{};
      at.sun_family = AF_UNIX;
      std::strncpy(at.sun_path, unix_path.c_str(), sizeof(at.sun_path) - 1);
      if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0) {
        ::close(fd);
        fd = -1;
      }
    } else {
      fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in at{};
      at.sin_family = AF_INET;
      at.sin_port = htons(static_cast<uint16_t>(port));
      ::inet_pton(AF_INET, "127.0.0.1", &at.sin_addr);
      if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0) {
        ::close(fd);
        fd = -1;
      }
    }
    if (fd < 0) continue;
    if (i >= idle) [[maybe_unused]]
      ssize_t sent = ::send(fd, kPartial, sizeof(kPartial) - 1, MSG_NOSIGNAL);
    fds_.push_back(fd);
  }
}

size_t HeldConnections::still_open() const {
  size_t open = 0;
  for (int fd : fds_) {
    pollfd p{fd, POLLIN, 0};
    char byte;
    // Readable with nothing to read (0) or an error: the server closed it.
    if (::poll(&p, 1, 0) == 0 || ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0) ++open;
  }
  return open;
}

}  // namespace wattcut::http::testing
