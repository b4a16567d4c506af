// Holds a server's connections between requests on one epoll thread, so that a connection
// costs a worker thread only while a request of its is being served.
//
// A connection that is idle (keep-alive) or still sending its request (request_framing.h) waits
// here: it costs its descriptor and the bytes it has sent, whatever it does. Once its request
// has arrived (or its headers have, for a body the worker reads itself) the connection goes to
// `serve` on the caller's worker pool, out of the epoll set; the worker gives it back with
// Add (keep-alive) or closes it. A request whose handler answers later (a long poll,
// deferred_response.h) comes back with its DeferredResponse: it waits here, watched only for its
// client going away, until the response is sent; the reactor then writes it without blocking
// (waiting for the socket to drain when the client reads slowly) and takes the connection back
// for its next request. The reactor closes on its own:
//  * a connection idle for `keep_alive_timeout` (nothing said), unless keep_open_while_idle;
//  * a request not all there within `request_timeout` of its first byte (408, `on_timeout`);
//  * a request that is framed wrongly (request_framing.h's 400 or 431);
//  * a response its client has not read within `request_timeout` of its first byte written;
//  * the peer's end of the connection (a deferred request's `on_gone` runs, through `run`), and
//    every connection it holds when it stops.
// Its answers (408, 400, 431) are written without waiting: a few hundred bytes into an empty
// socket buffer. A connection it closes after an answer lingers for up to 200 ms, reading and
// dropping what the client still sends, so that the close does not reset the answer away.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/http/deferred_response.h"

namespace wattcut::http {

// The 408's message, the reactor's and httplib's (a body that stopped arriving) alike.
std::string RequestTimedOutMessage(std::chrono::milliseconds request_timeout);

class ConnectionReactor {
 public:
  using Clock = std::chrono::steady_clock;

  // What the reactor's user keeps with a connection (its peer, its admission).
  struct Payload {
    virtual ~Payload() = default;
  };
  struct Connection {
    int fd = -1;
    std::string buffered;               // what it sent that no request has taken yet
    Clock::time_point request_began{};  // the first byte of the request under way
    bool in_request = false;
    size_t requests = 0;  // requests served on it so far
    // Set before Add: answered with this status and message at once, then closed (a client over
    // its connection limit).
    int refusal_status = 0;
    std::string refusal;
    // Not closed for being idle: its user holds something on it that only the client's close ends
    // (BoundedHttpServer::KeepOpenWhileIdle).
    bool keep_open_while_idle = false;
    // Set before Add: its request's answer comes later (deferred_response.h); the connection waits
    // for it, and is closed after it when close_after_response.
    std::shared_ptr<DeferredResponse> awaiting;
    bool close_after_response = false;
    std::unique_ptr<Payload> payload;
  };

  struct Options {
    std::chrono::milliseconds request_timeout{std::chrono::seconds(30)};
    std::chrono::milliseconds keep_alive_timeout{std::chrono::seconds(5)};
    size_t max_header_bytes = 64 << 10;
    size_t max_buffered_body_bytes = 64 << 10;
  };
  struct Callbacks {
    // A request has arrived: serve it (on a worker: this runs on the reactor's thread).
    std::function<void(std::unique_ptr<Connection>)> serve;
    // The reactor answered 408 (its request took longer than request_timeout).
    std::function<void()> on_timeout;
    // The reactor is closing the connection (before its descriptor is closed).
    std::function<void(Connection&)> on_close;
    // Runs `task` on a worker (a deferred request's on_gone: it may take its owner's locks).
    std::function<void(std::function<void()> task)> run;
  };

  ConnectionReactor();
  ~ConnectionReactor();
  ConnectionReactor(const ConnectionReactor&) = delete;
  ConnectionReactor& operator=(const ConnectionReactor&) = delete;

  Status Start(Options options, Callbacks callbacks);
  // A new connection, one whose request was served (kept alive), or one whose request waits for
  // its deferred response (`awaiting`); after Stop it is closed.
  void Add(std::unique_ptr<Connection> connection);
  // Where the DeferredResponses of the connections it holds post their responses.
  const std::shared_ptr<ReactorMailbox>& mailbox() const { return mailbox_; }
  // Closes every connection it holds and ends its thread. Connections being served are not its
  // own: their workers close them (Add after Stop closes).
  void Stop();

 private:
  struct Held;
  void Run();
  void Take(std::unique_ptr<Connection> connection);  // into held_ (the reactor's thread)
  void Readable(Held& held);
  void Hand(Held& held);  // to `serve`
  // A deferred request: its response, once sent, is written (Respond), in as many pieces as the
  // socket takes (WriteOut); then the connection waits for its next request or is closed
  // (Responded). Its client gone first: Gone.
  void Respond(Held& held);
  void WriteOut(Held& held);
  void Responded(Held& held);
  void Gone(Held& held);
  void Watch(Held& held, uint32_t events);
  void Answer(Held& held, int status, const std::string& error);
  void Close(Held& held);
  // Closes a connection the reactor does not hold (handed to it after Stop, or when it stops).
  void Discard(Connection& connection);
  void Wake();

  Options options_;
  Callbacks callbacks_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
  std::map<int, std::unique_ptr<Held>> held_;  // the reactor thread's own: descriptor -> what it holds

  mutable std::mutex mu_;  // guards what Add hands over and `stopped_`
  std::vector<std::unique_ptr<Connection>> incoming_;
  bool stopped_ = false;
  std::shared_ptr<ReactorMailbox> mailbox_;
};

// The deferred responses sent and not yet written: shared by the reactor and the
// DeferredResponses, which may outlive it (an owner answering after the server stopped).
struct ReactorMailbox {
  // Queues `response` and wakes the reactor; false once the reactor has stopped.
  bool Post(std::shared_ptr<DeferredResponse> response);

  std::mutex mu;
  std::vector<std::shared_ptr<DeferredResponse>> responses;
  bool closed = false;
  int wake_fd = -1;
};

}  // namespace wattcut::http
