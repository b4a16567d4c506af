// For tests: the connections a careless or hostile local user holds open on a server, to show
// that they cost the server no thread: idle ones (connected, nothing sent) and partial requests
// (a request line and the start of a header, never finished), over TCP or a Unix socket.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace wattcut::http::testing {

class HeldConnections {
 public:
  // Opens `idle` and `partial` connections to 127.0.0.1:`port`, or to the Unix socket `path`.
  static HeldConnections OnTcp(int port, int idle, int partial);
  static HeldConnections OnUnixSocket(const std::string& path, int idle, int partial);
  HeldConnections(HeldConnections&& other) noexcept;
  HeldConnections(const HeldConnections&) = delete;
  HeldConnections& operator=(const HeldConnections&) = delete;
  ~HeldConnections();

  // How many were opened; how many of them the server has not closed.
  size_t opened() const { return fds_.size(); }
  size_t still_open() const;

 private:
  HeldConnections() = default;
  void Open(int idle, int partial, const std::string& unix_path, int port);
  std::vector<int> fds_;
};

}  // namespace wattcut::http::testing
