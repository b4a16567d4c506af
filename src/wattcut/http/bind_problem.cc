#include "wattcut/http/bind_problem.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace wattcut::http {

std::string BindProblem(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int e = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found); e != 0) {
    return gai_strerror(e);
  }
  std::string problem = "no address to bind";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      problem = std::strerror(errno);
      continue;
    }
    const int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    const bool bound = bind(fd, a->ai_addr, a->ai_addrlen) == 0;
    const int bind_errno = errno;
    close(fd);
    if (bound) {
      problem.clear();
      break;
    }
    problem = std::strerror(bind_errno);
  }
  freeaddrinfo(found);
  return problem;
}

}  // namespace wattcut::http
