// A response a handler gives after it has returned (a long poll), so that a request waiting for
// its answer costs its descriptor and this record, not a worker thread.
//
// Within a handler, BoundedHttpServer::Defer() parks the request: what the handler put in its
// httplib::Response is dropped, the worker goes on to the next request, and the connection waits
// in the reactor (connection_reactor.h) for Send(), which any thread may call. The reactor then
// writes the response without blocking and takes the connection back for its next request
// (keep-alive), or closes it (the request or the server asked to close, or it was the
// connection's last). Exactly one of these ends a deferred request:
//  * Send() (the first call; a later one returns false and sends nothing);
//  * the client closes the connection (or resets it) first: `on_gone` runs, on a worker, and a
//    later Send() returns false;
//  * the server stops: responses already sent are written if the socket takes them at once,
//    then every connection is closed; `on_gone` does not run (the owner stops too).
// The record is small: the status, the body and two callbacks; the reactor keeps a connection's
// unread bytes beside it (a pipelined request), as for any connection it holds.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace wattcut::http {

struct ReactorMailbox;

class DeferredResponse : public std::enable_shared_from_this<DeferredResponse> {
 public:
  struct Ends {
    // The client went away before Send (runs on a worker thread, at most once).
    std::function<void()> on_gone;
  };

  // Sends `status` with `body` of `content_type`. Thread-safe. True when the response will be
  // written; false when one was already sent, the client has gone or the server has stopped.
  bool Send(int status, std::string body, std::string content_type = "application/json");

  // What the reactor writes: the status line, the headers and the body (none for HEAD).
  struct Outgoing {
    int status = 0;
    std::string bytes;
  };

  // ---- For BoundedHttpServer and the reactor.
  // `fd`: the connection's descriptor (with this record's address, how the reactor finds the
  // connection it answers); `head`: a HEAD request (no body is written); `on_sent`: told the
  // status when the reactor takes the response to write.
  DeferredResponse(std::shared_ptr<ReactorMailbox> mailbox, int fd, bool head, Ends ends,
                   std::function<void(int status)> on_sent);
  int fd() const { return fd_; }
  // The response's bytes, once Send has been called; nullopt before, and after the first take.
  // `close`: the connection is closed after it (the response says "Connection: close").
  std::optional<Outgoing> Take(bool close);
  // The client went first: true when nothing had been sent (then `on_gone` is due, and returned).
  std::function<void()> MarkGone();

 private:
  enum class State { kWaiting, kSent, kTaken, kGone };

  std::shared_ptr<ReactorMailbox> mailbox_;
  const int fd_;
  const bool head_;
  std::mutex mu_;
  State state_ = State::kWaiting;
  int status_ = 0;
  std::string body_;
  std::string content_type_;
  Ends ends_;
  std::function<void(int)> on_sent_;
};

// A response's bytes: "HTTP/1.1 STATUS REASON", Content-Type, Content-Length, "Connection: close"
// when `close`, then the body unless `head`.
std::string ResponseBytes(int status, const std::string& body, const std::string& content_type, bool close, bool head);

}  // namespace wattcut::http
