// Whether a host or a socket address is this machine's loopback (127.0.0.0/8, ::1): what a
// server that binds beyond loopback must guard, and a TCP peer that is exempt from limits.
#pragma once

#include <sys/socket.h>

#include <string_view>

namespace wattcut::http {

// True for a numeric address in 127.0.0.0/8 written as a dotted quad, for ::1 (bracketed or
// not), and for "localhost" (any case). Never resolves a name: "127.evil.example" is not
// loopback, nor is "127.1".
bool IsLoopbackHost(std::string_view host);

// True when a bound or peer socket address is in 127.0.0.0/8 or is ::1.
bool IsLoopbackAddress(const sockaddr_storage& address);

}  // namespace wattcut::http
