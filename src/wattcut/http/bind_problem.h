// Why a TCP listening address cannot be bound, in the operating system's words: cpp-httplib's
// bind_to_port says only that it failed, and "cannot bind 127.0.0.1:7787" leaves the user to guess
// between a port in use, a privileged port and an address this host does not have.
#pragma once

#include <string>

namespace wattcut::http {

// Binds a socket to host:port as the server does (SO_REUSEADDR) and closes it: the reason it
// fails ("Address already in use", "Permission denied", "Cannot assign requested address", or
// the resolver's answer for a bad host), or "" when it binds now.
std::string BindProblem(const std::string& host, int port);

}  // namespace wattcut::http
