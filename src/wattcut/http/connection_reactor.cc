#include "wattcut/http/connection_reactor.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "wattcut/base/general_text.h"
#include "wattcut/http/error_body.h"
#include "wattcut/http/http_status.h"
#include "wattcut/http/request_framing.h"

namespace wattcut::http {

namespace {

using std::chrono::milliseconds;

// How often the timers of the connections held are looked at: their timeouts are seconds.
constexpr milliseconds kTimerScan{100};
// A closed connection reads and drops what its client still sends, at most this long.
constexpr milliseconds kLinger{200};
// What one wake-up reads from one connection at most, so that one fast client cannot hold
// the thread while others wait.
constexpr size_t kMaxReadPerWake = 256 << 10;

}  // namespace

struct ConnectionReactor::Held {
  std::unique_ptr<Connection> connection;
  Clock::time_point idle_since;
  bool lingering = false;  // answered and shut down: reading and dropping until linger_until
  Clock::time_point linger_until;
  // A deferred response being written: its bytes, how many are out, since when.
  bool writing = false;
  std::string output;
  size_t written = 0;
  bool last_piece = true;  // the answer ends with it (false: a stream's piece)
  Clock::time_point writing_since;
  // Waiting for its deferred response to be sent (watched only for the client going away).
  bool parked() const { return connection->awaiting != nullptr && !writing; }
};

bool ReactorMailbox::Post(std::shared_ptr<DeferredResponse> response) {
  std::lock_guard lock(mu);
  if (closed) return false;
  responses.push_back(std::move(response));
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd, &one, sizeof(one));
  return true;
}

ConnectionReactor::ConnectionReactor() : mailbox_(std::make_shared<ReactorMailbox>()) {}
ConnectionReactor::~ConnectionReactor() { Stop(); }

Status ConnectionReactor::Start(Options options, Callbacks callbacks) {
  options_ = options;
  callbacks_ = std::move(callbacks);
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || wake_fd_ < 0)
    return Error::Unavailable(std::string("epoll or eventfd: ") + std::strerror(errno));
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = wake_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event);
  {
    std::lock_guard lock(mailbox_->mu);
    mailbox_->wake_fd = wake_fd_;
  }
  try {
    thread_ = std::thread([this] { Run(); });
  } catch (const std::system_error& e) {
    return Error::Unavailable(std::string("cannot start the connection thread: ") + e.what());
  }
  return Status::Ok();
}

void ConnectionReactor::Add(std::unique_ptr<Connection> connection) {
  {
    std::lock_guard lock(mu_);
    if (!stopped_ && thread_.joinable()) {
      incoming_.push_back(std::move(connection));
      Wake();
      return;
    }
  }
  Discard(*connection);
}

void ConnectionReactor::Stop() {
  {
    // Nothing is posted after this: the reactor's last round writes what was.
    std::lock_guard lock(mailbox_->mu);
    mailbox_->closed = true;
  }
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    Wake();
  }
  if (thread_.joinable()) thread_.join();
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  epoll_fd_ = wake_fd_ = -1;
}

void ConnectionReactor::Wake() {
  if (wake_fd_ < 0) return;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

void ConnectionReactor::Run() {
  std::map<int, std::unique_ptr<Held>>& held = held_;  // (the reactor thread's own)
  std::vector<epoll_event> events(256);
  Clock::time_point next_scan = Clock::now() + kTimerScan;
  for (;;) {
    std::vector<std::unique_ptr<Connection>> added;
    std::vector<std::shared_ptr<DeferredResponse>> responses;
    bool stopping = false;
    {
      std::lock_guard lock(mu_);
      added.swap(incoming_);
      stopping = stopped_;
    }
    for (auto& connection : added) Take(std::move(connection));
    {
      std::lock_guard lock(mailbox_->mu);
      responses.swap(mailbox_->responses);
    }
    for (const auto& response : responses) {
      auto it = held.find(response->fd());
      if (it != held.end() && it->second->connection->awaiting == response) Respond(*it->second);
    }
    if (stopping) {
      // The responses sent before the stop went out above as far as their sockets took them.
      while (!held.empty()) Close(*held.begin()->second);
      break;
    }
    const auto wait = std::chrono::duration_cast<milliseconds>(next_scan - Clock::now());
    const int ready = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()),
                                   static_cast<int>(std::max<int64_t>(0, wait.count()) + 1));
    for (int i = 0; i < std::max(ready, 0); ++i) {
      const epoll_event& event = events[static_cast<size_t>(i)];
      const int fd = event.data.fd;
      if (fd == wake_fd_) {
        uint64_t drained = 0;
        [[maybe_unused]] ssize_t n = ::read(wake_fd_, &drained, sizeof(drained));
        continue;
      }
      auto it = held.find(fd);
      if (it == held.end()) continue;
      Held& h = *it->second;
      const bool hung_up = (event.events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
      if (h.parked()) {
        if (hung_up) Gone(h);
      } else if (h.writing) {
        if (hung_up) {
          Gone(h);
        } else if ((event.events & EPOLLOUT) != 0) {
          WriteOut(h);
        }
      } else {
        Readable(h);
      }
    }
    const Clock::time_point now = Clock::now();
    if (now < next_scan) continue;
    next_scan = now + kTimerScan;
    std::vector<Held*> expired;
    for (auto& [fd, h] : held) {
      const Connection& c = *h->connection;
      if (h->parked()) continue;  // its owner's to end (its answer, its client's going)
      if (h->lingering ? now >= h->linger_until
          : h->writing
              ? now - h->writing_since >= options_.request_timeout
              : (c.in_request ? now - c.request_began >= options_.request_timeout
                              : !c.keep_open_while_idle && now - h->idle_since >= options_.keep_alive_timeout)) {
        expired.push_back(h.get());
      }
    }
    for (Held* h : expired) {
      if (h->writing) {
        Gone(*h);  // its client has not read its answer within request_timeout
      } else if (h->lingering || !h->connection->in_request) {
        Close(*h);
      } else {
        if (callbacks_.on_timeout) callbacks_.on_timeout();
        Answer(*h, 408, RequestTimedOutMessage(options_.request_timeout));
      }
    }
  }
}

void ConnectionReactor::Take(std::unique_ptr<Connection> connection) {
  const int fd = connection->fd;
  auto entry = std::make_unique<Held>();
  entry->connection = std::move(connection);
  entry->idle_since = Clock::now();
  Held& h = *entry;
  held_[fd] = std::move(entry);
  epoll_event event{};
  event.events = h.parked() ? EPOLLRDHUP : EPOLLIN | EPOLLRDHUP;
  event.data.fd = fd;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
  if (h.connection->refusal_status != 0) {
    Answer(h, h.connection->refusal_status, h.connection->refusal);
    return;
  }
  // Its answer may have been sent before it got here.
  if (h.parked()) return Respond(h);
  // A pipelined request may already be all there.
  if (!h.connection->buffered.empty()) Readable(h);
}

void ConnectionReactor::Watch(Held& held, uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.fd = held.connection->fd;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, held.connection->fd, &event);
}

void ConnectionReactor::Respond(Held& held) {
  if (held.writing) return;  // what it writes now first; WriteOut takes the rest after
  Connection& c = *held.connection;
  auto out = c.awaiting->Take(c.close_after_response);
  if (!out) {
    // Nothing to write now; a stream cut off (its client did not keep up) is closed.
    if (c.awaiting->cut_off()) Close(held);
    return;
  }
  held.writing = true;
  held.output = std::move(out->bytes);
  held.written = 0;
  held.last_piece = out->last;
  held.writing_since = Clock::now();
  WriteOut(held);
}

void ConnectionReactor::WriteOut(Held& held) {
  Connection& c = *held.connection;
  while (held.written < held.output.size()) {
    const ssize_t sent =
        ::send(c.fd, held.output.data() + held.written, held.output.size() - held.written, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent > 0) {
      held.written += static_cast<size_t>(sent);
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      c.awaiting->SetClientBlocked(true);
      Watch(held, EPOLLOUT | EPOLLRDHUP);  // the rest when the client has read some
      return;
    }
    Gone(held);  // the client is gone
    return;
  }
  c.awaiting->SetClientBlocked(false);
  if (held.last_piece) return Responded(held);
  // A stream's piece is out: the connection waits for the next one.
  held.writing = false;
  held.output.clear();
  held.written = 0;
  Watch(held, EPOLLRDHUP);
  Respond(held);
}

void ConnectionReactor::Responded(Held& held) {
  Connection& c = *held.connection;
  held.writing = false;
  std::string().swap(held.output);
  held.written = 0;
  c.awaiting.reset();
  c.in_request = false;
  if (c.close_after_response) {
    ::shutdown(c.fd, SHUT_WR);
    c.buffered.clear();
    held.lingering = true;
    held.linger_until = Clock::now() + kLinger;
    Watch(held, EPOLLIN | EPOLLRDHUP);
    return;
  }
  held.idle_since = Clock::now();
  Watch(held, EPOLLIN | EPOLLRDHUP);
  // A pipelined request that came with the deferred one.
  if (!c.buffered.empty()) Readable(held);
}

void ConnectionReactor::Gone(Held& held) {
  std::function<void()> on_gone = held.connection->awaiting ? held.connection->awaiting->MarkGone() : nullptr;
  if (on_gone && callbacks_.run) callbacks_.run(std::move(on_gone));
  Close(held);
}

void ConnectionReactor::Readable(Held& held) {
  Connection& c = *held.connection;
  char chunk[16384];
  size_t read_now = 0;
  bool ended = false;
  while (read_now < kMaxReadPerWake) {
    const ssize_t got = ::recv(c.fd, chunk, sizeof(chunk), MSG_DONTWAIT);
    if (got > 0) {
      read_now += static_cast<size_t>(got);
      if (held.lingering) continue;  // dropped
      c.buffered.append(chunk, static_cast<size_t>(got));
      // Past what a request may buffer here the framing decides at once (it needs no more).
      if (c.buffered.size() > options_.max_header_bytes + options_.max_buffered_body_bytes) break;
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    ended = true;  // the peer closed, or the connection failed
    break;
  }
  if (held.lingering) {
    if (ended) Close(held);
    return;
  }
  // A request's first bytes: read now, or a pipelined request given back by Add.
  if (!c.buffered.empty() && !c.in_request) {
    c.in_request = true;
    c.request_began = Clock::now();
  }
  if (c.in_request) {
    const RequestFraming framing =
        FrameRequest(c.buffered, options_.max_header_bytes, options_.max_buffered_body_bytes);
    switch (framing.state) {
      case RequestFraming::State::kReady:
        if (framing.add_empty_length) c.buffered = WithEmptyContentLength(c.buffered, framing.header_bytes);
        Hand(held);
        return;
      case RequestFraming::State::kBad:
        Answer(held, framing.status, framing.error);
        return;
      case RequestFraming::State::kIncomplete:
        break;
    }
  }
  if (ended) Close(held);
}

void ConnectionReactor::Hand(Held& held) {
  const int fd = held.connection->fd;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  std::unique_ptr<Connection> connection = std::move(held.connection);
  held_.erase(fd);
  callbacks_.serve(std::move(connection));
}

void ConnectionReactor::Answer(Held& held, int status, const std::string& error) {
  Connection& c = *held.connection;
  const std::string body = ErrorBody(error);
  const std::string response = "HTTP/1.1 " + std::to_string(status) + " " + HttpStatusText(status) +
                               "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                               "\r\nConnection: close\r\n\r\n" + body;
  [[maybe_unused]] ssize_t sent = ::send(c.fd, response.data(), response.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  ::shutdown(c.fd, SHUT_WR);
  c.buffered.clear();
  c.buffered.shrink_to_fit();
  c.in_request = false;
  held.lingering = true;
  held.linger_until = Clock::now() + kLinger;
}

void ConnectionReactor::Close(Held& held) {
  // A deferred answer not all written is over: its owner stops producing (no on_gone: the
  // reactor closes it for its own reasons, or stops).
  if (held.connection->awaiting) held.connection->awaiting->MarkGone();
  const int fd = held.connection->fd;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  Discard(*held.connection);
  held_.erase(fd);  // destroys `held`
}

void ConnectionReactor::Discard(Connection& connection) {
  if (callbacks_.on_close) callbacks_.on_close(connection);
  ::close(connection.fd);
}

std::string RequestTimedOutMessage(std::chrono::milliseconds request_timeout) {
  return "the request did not arrive whole within the request timeout (" +
         GeneralText(static_cast<double>(request_timeout.count()) / 1000) + " s)";
}

}  // namespace wattcut::http
