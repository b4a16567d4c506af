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
};

ConnectionReactor::ConnectionReactor() = default;
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
    bool stopping = false;
    {
      std::lock_guard lock(mu_);
      added.swap(incoming_);
      stopping = stopped_;
    }
    if (stopping) {
      for (auto& connection : added) Discard(*connection);
      while (!held.empty()) Close(*held.begin()->second);
      break;
    }
    for (auto& connection : added) {
      const int fd = connection->fd;
      auto entry = std::make_unique<Held>();
      entry->connection = std::move(connection);
      entry->idle_since = Clock::now();
      Held& h = *entry;
      held[fd] = std::move(entry);
      epoll_event event{};
      event.events = EPOLLIN | EPOLLRDHUP;
      event.data.fd = fd;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
      if (h.connection->refusal_status != 0) {
        Answer(h, h.connection->refusal_status, h.connection->refusal);
        continue;
      }
      // A pipelined request may already be all there.
      if (!h.connection->buffered.empty()) Readable(h);
    }
    const auto wait = std::chrono::duration_cast<milliseconds>(next_scan - Clock::now());
    const int ready = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()),
                                   static_cast<int>(std::max<int64_t>(0, wait.count()) + 1));
    for (int i = 0; i < std::max(ready, 0); ++i) {
      const int fd = events[static_cast<size_t>(i)].data.fd;
      if (fd == wake_fd_) {
        uint64_t drained = 0;
        [[maybe_unused]] ssize_t n = ::read(wake_fd_, &drained, sizeof(drained));
        continue;
      }
      auto it = held.find(fd);
      if (it != held.end()) Readable(*it->second);
    }
    const Clock::time_point now = Clock::now();
    if (now < next_scan) continue;
    next_scan = now + kTimerScan;
    std::vector<Held*> expired;
    for (auto& [fd, h] : held) {
      const Connection& c = *h->connection;
      if (h->lingering
              ? now >= h->linger_until
              : (c.in_request ? now - c.request_began >= options_.request_timeout
                              : !c.keep_open_while_idle && now - h->idle_since >= options_.keep_alive_timeout)) {
        expired.push_back(h.get());
      }
    }
    for (Held* h : expired) {
      if (h->lingering || !h->connection->in_request) {
        Close(*h);
      } else {
        if (callbacks_.on_timeout) callbacks_.on_timeout();
        Answer(*h, 408, RequestTimedOutMessage(options_.request_timeout));
      }
    }
  }
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
