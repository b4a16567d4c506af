// A response a handler gives after it has returned (a long poll, a never-ending stream), so that
// a request waiting for its answer costs its descriptor and this record, not a worker thread.
//
// Within a handler, BoundedHttpServer::Defer() parks the request: what the handler put in its
// httplib::Response is dropped, the worker goes on to the next request, and the connection waits
// in the reactor (connection_reactor.h) for Send(), which any thread may call. The reactor then
// writes the response without blocking and takes the connection back for its next request
// (keep-alive), or closes it (the request or the server asked to close, or it was the
// connection's last). Exactly one of these ends a deferred request:
//  * Send() (the first call; a later one returns false and sends nothing), or, for a stream,
//    EndStream();
//  * the client closes the connection (or resets it) first: `on_gone` runs, on a worker, and a
//    later Send() returns false;
//  * the server stops: what was sent is written if the socket takes it at once, then every
//    connection is closed; `on_gone` does not run (the owner stops too).
// A stream (StartStream, then SendChunk as often as it likes) is written with chunked transfer
// encoding, each piece as it comes; what its client has not read yet waits here. A client that
// reads slower than its stream is written is cut off (SendChunk returns false, and the connection
// is closed) once its socket is full and kMaxUnsentStreamBytes (64 KiB: dozens of a stream's
// pieces) wait here besides; a reactor merely slow to take the pieces cuts nobody off.
// The record is small: the status, what is not written yet and one callback; the reactor keeps a
// connection's unread bytes beside it (a pipelined request), as for any connection it holds.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace wattcut::http {

struct ReactorMailbox;

class DeferredResponse : public std::enable_shared_from_this<DeferredResponse> {
 public:
  struct Ends {
    // The client went away before the answer was all sent (runs on a worker thread, at most once).
    std::function<void()> on_gone;
  };
  static constexpr size_t kMaxUnsentStreamBytes = size_t{64} << 10;
  using Headers = std::vector<std::pair<std::string, std::string>>;

  // Sends `status` with `body` of `content_type`. Thread-safe. True when the response will be
  // written; false when one was already sent, the client has gone or the server has stopped.
  bool Send(int status, std::string body, std::string content_type = "application/json");

  // A stream: its status and headers now (with Transfer-Encoding: chunked), then SendChunk's
  // pieces, then EndStream's last chunk. Each is false when the answer was sent or ended already,
  // the client has gone, the server has stopped, or (SendChunk) the client has not read
  // kMaxUnsentStreamBytes of what was sent: then the stream is over (the connection is closed).
  bool StartStream(int status, std::string content_type, Headers headers = {});
  bool SendChunk(const std::string& data);
  bool EndStream();
  // Over: the answer was sent whole, or the stream ended, or the client has gone.
  bool over() const;
  // Ended without its answer written whole: its client went away, or did not keep up.
  bool cut_off() const;

  // What the reactor writes next: bytes of the status line, the headers and the body (none for
  // HEAD), and whether they end the answer (false while a stream goes on).
  struct Outgoing {
    int status = 0;
    std::string bytes;
    bool last = true;
  };

  // ---- For BoundedHttpServer and the reactor.
  // `fd`: the connection's descriptor (with this record's address, how the reactor finds the
  // connection it answers); `head`: a HEAD request (no body is written); `on_sent`: told the
  // status when the reactor first takes the answer to write.
  DeferredResponse(std::shared_ptr<ReactorMailbox> mailbox, int fd, bool head, Ends ends,
                   std::function<void(int status)> on_sent);
  int fd() const { return fd_; }
  // What was sent and not yet taken; nullopt when there is nothing. `close`: the connection is
  // closed after the answer (it says "Connection: close").
  std::optional<Outgoing> Take(bool close);
  // The client went first: `on_gone` when the answer was not all sent yet (due, and returned).
  std::function<void()> MarkGone();
  // The reactor found the client's socket full (true) or wrote all it had (false).
  void SetClientBlocked(bool blocked);

 private:
  enum class State { kWaiting, kSent, kStreaming, kEnded, kTaken, kGone };

  bool Post();

  std::shared_ptr<ReactorMailbox> mailbox_;
  const int fd_;
  const bool head_;
  mutable std::mutex mu_;
  State state_ = State::kWaiting;
  int status_ = 0;
  std::string body_;  // Send's body, or a stream's bytes not yet taken
  std::string content_type_;
  Headers headers_;
  bool head_taken_ = false;      // a stream's status line and headers went out
  bool client_blocked_ = false;  // its socket is full: what comes now waits here
  Ends ends_;
  std::function<void(int)> on_sent_;
};

// A response's head: "HTTP/1.1 STATUS REASON", Content-Type, then Content-Length (`length`) or
// Transfer-Encoding: chunked (nullopt), `headers`, "Connection: close" when `close`.
std::string ResponseHead(int status, const std::string& content_type, std::optional<size_t> length, bool close,
                         const DeferredResponse::Headers& headers = {});
// A whole response: its head and, unless `head`, its body.
std::string ResponseBytes(int status, const std::string& body, const std::string& content_type, bool close, bool head);
// One piece of a chunked body ("" is the last chunk, which ends it).
std::string Chunk(const std::string& data);

}  // namespace wattcut::http
