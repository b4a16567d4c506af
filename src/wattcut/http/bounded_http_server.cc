#include "wattcut/http/bounded_http_server.h"

#include <grp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "wattcut/base/printable_text.h"
#include "wattcut/http/error_body.h"
#include "wattcut/http/http_status.h"
#include "wattcut/http/http_thread_pool.h"
#include "wattcut/http/loopback.h"

namespace wattcut::http {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Waits are cut into slices so that a stopping server is noticed within one.
constexpr milliseconds kWaitSlice{100};

// A socket stream like httplib's SocketStream (4 KiB read buffer, per-call read and write
// timeouts) plus a deadline on reads, armed while a request is being received.
class DeadlineStream final : public httplib::Stream {
 public:
  // `pending`: what the connection sent that the reactor already read (the request, or its start).
  DeadlineStream(socket_t sock, milliseconds read_timeout, milliseconds write_timeout,
                 const std::atomic<socket_t>& listener, std::string pending)
      : sock_(sock),
        read_timeout_(read_timeout),
        write_timeout_(write_timeout),
        listener_(listener),
        pending_(std::move(pending)) {}

  void Arm(Clock::time_point deadline) {
    deadline_ = deadline;
    armed_ = true;
    timed_out_ = false;
  }
  void Disarm() { armed_ = false; }
  bool timed_out() const { return timed_out_; }
  // The request's answer is deferred (deferred_response.h): what httplib writes now is dropped.
  void DiscardWrites() { discard_writes_ = true; }

  // What was read from the socket and not taken by the request: the next (pipelined) one's start.
  std::string TakeUnread() {
    std::string unread = pending_.substr(pending_offset_);
    unread.append(buffer_ + offset_, filled_ - offset_);
    pending_.clear();
    pending_offset_ = offset_ = filled_ = 0;
    return unread;
  }

  bool is_readable() const override {
    if (Buffered() > 0) return true;
    milliseconds wait = read_timeout_;
    bool until_deadline = false;
    if (armed_) {
      auto left = std::chrono::ceil<milliseconds>(deadline_ - Clock::now());
      if (left.count() <= 0) {
        timed_out_ = true;
        return false;
      }
      until_deadline = left <= wait;
      wait = std::min(wait, left);
    }
    if (WaitFor(POLLIN, wait) > 0) return true;
    if (until_deadline) timed_out_ = true;
    return false;
  }

  // Writes are not cut short by a stopping server: a long poll's 503 must still go out.
  bool is_writable() const override { return WaitFor(POLLOUT, write_timeout_) > 0; }

  ssize_t read(char* ptr, size_t size) override {
    if (pending_offset_ < pending_.size()) {
      const size_t n = std::min(size, pending_.size() - pending_offset_);
      std::memcpy(ptr, pending_.data() + pending_offset_, n);
      pending_offset_ += n;
      return static_cast<ssize_t>(n);
    }
    if (size_t buffered = filled_ - offset_; buffered > 0) {
      size_t n = std::min(size, buffered);
      std::memcpy(ptr, buffer_ + offset_, n);
      offset_ += n;
      return static_cast<ssize_t>(n);
    }
    if (!is_readable()) return -1;
    if (size >= sizeof(buffer_)) return Receive(ptr, size);
    ssize_t got = Receive(buffer_, sizeof(buffer_));
    if (got <= 0) return got;
    size_t n = std::min(size, static_cast<size_t>(got));
    std::memcpy(ptr, buffer_, n);
    offset_ = n;
    filled_ = static_cast<size_t>(got);
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (discard_writes_) return static_cast<ssize_t>(size);
    if (!is_writable()) return -1;
    for (;;) {
      ssize_t sent = ::send(sock_, ptr, size, MSG_NOSIGNAL);
      if (sent < 0 && errno == EINTR) continue;
      return sent;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { Address(::getpeername, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { Address(::getsockname, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  size_t Buffered() const { return (pending_.size() - pending_offset_) + (filled_ - offset_); }

  // 1 ready, 0 timed out (or, waiting to read, the server is stopping), -1 error.
  int WaitFor(short events, milliseconds timeout) const {
    auto until = Clock::now() + timeout;
    for (;;) {
      if ((events & POLLIN) != 0 && listener_ == INVALID_SOCKET) return 0;
      auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now());
      if (left.count() <= 0) return 0;
      pollfd fd{sock_, events, 0};
      int ready = ::poll(&fd, 1, static_cast<int>(std::min(left, kWaitSlice).count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready != 0) return ready > 0 ? 1 : -1;
    }
  }

  ssize_t Receive(char* ptr, size_t size) {
    for (;;) {
      ssize_t got = ::recv(sock_, ptr, size, 0);
      if (got < 0 && errno == EINTR) continue;
      return got;
    }
  }

  template <typename Getter>
  void Address(Getter getter, std::string& ip, int& port) const {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    char host[NI_MAXHOST];
    char service[NI_MAXSERV];
    if (getter(sock_, reinterpret_cast<sockaddr*>(&address), &length) == 0 &&
        ::getnameinfo(reinterpret_cast<sockaddr*>(&address), length, host, sizeof(host), service, sizeof(service),
                      NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
      ip = host;
      port = std::atoi(service);
    }
  }

  socket_t sock_;
  milliseconds read_timeout_;
  milliseconds write_timeout_;
  const std::atomic<socket_t>& listener_;
  std::string pending_;
  size_t pending_offset_ = 0;
  bool armed_ = false;
  Clock::time_point deadline_;
  mutable bool timed_out_ = false;
  bool discard_writes_ = false;
  char buffer_[4096];
  size_t offset_ = 0;
  size_t filled_ = 0;
};

// What a handler on this thread may ask of the connection it serves.
struct ConnectionState {
  DeadlineStream* stream = nullptr;
  bool close_after_response = false;
  // The request's answer comes later (Defer), and what tells the server's observer it went out.
  std::shared_ptr<DeferredResponse> deferred;
  bool keep_open_while_idle = false;  // for the rest of the connection's life
  ConnectionInfo info;
};
thread_local ConnectionState* t_connection = nullptr;
thread_local BoundedHttpServer* t_server = nullptr;

milliseconds ToMilliseconds(time_t sec, time_t usec) {
  return milliseconds(static_cast<int64_t>(sec) * 1000 + static_cast<int64_t>(usec) / 1000);
}

// Sends FIN, then reads and drops what the client still sends for a moment, so that closing
// with unread data does not reset the connection before the client has read the response.
void CloseSocket(socket_t sock, bool drain) {
  ::shutdown(sock, SHUT_WR);
  if (drain) {
    auto until = Clock::now() + milliseconds(200);
    char sink[4096];
    for (size_t dropped = 0; dropped < (size_t{1} << 20);) {
      auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now());
      if (left.count() <= 0) break;
      pollfd fd{sock, POLLIN, 0};
      if (::poll(&fd, 1, static_cast<int>(left.count())) <= 0) break;
      ssize_t got = ::recv(sock, sink, sizeof(sink), 0);
      if (got <= 0) break;
      dropped += static_cast<size_t>(got);
    }
  }
  ::close(sock);
}

std::string NumericHost(const sockaddr_storage& address, socklen_t length) {
  char host[NI_MAXHOST];
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof(host), nullptr, 0,
                    NI_NUMERICHOST) != 0) {
    return "unknown";
  }
  return host;
}

}  // namespace

namespace {

// httplib's accept loop hands each connection to its task queue; this one runs the hand-off at
// once on the loop's thread (it only registers the connection with the reactor).
class InlineTaskQueue final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> job) override { job(); }
  void shutdown() override {}
};

}  // namespace

BoundedHttpServer::BoundedHttpServer(ConnectionLimits limits, Observer observer)
    : limits_(limits), observer_(std::move(observer)) {
  new_task_queue = [] { return new InlineTaskQueue; };
  // Every error answer has a JSON body, those httplib makes on its own too (a 404 for an unknown
  // route, a 400 for a request line it cannot read, a 408): {"error": "no such endpoint: GET /x"}.
  set_error_handler(HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
    if (RequestTimedOut()) {
      res.status = 408;
      res.set_content(ErrorBody(RequestTimedOutMessage(limits_.request_timeout)), "application/json");
    } else if (res.body.empty()) {
      res.set_content(ErrorBody(std::string(HttpStatusText(res.status)) + ": " + PrintableText(req.method, 16) + " " +
                                PrintableText(req.path)),
                      "application/json");
    }
    // A request line httplib could not read leaves nothing to keep the connection for: it is
    // closed after the answer (it was kept for the keep-alive timeout, a minute on the agent).
    if (req.path.empty() || req.version.empty()) CloseAfterResponse();
    return HandlerResponse::Handled;
  }));
  // Runs just before the response headers are written: a connection about to be closed
  // says so, so that the client opens a new one for its next request.
  set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
    if (t_connection != nullptr && (t_connection->close_after_response || t_connection->stream->timed_out())) {
      res.set_header("Connection", "close");
    }
  });
}

BoundedHttpServer::Admission BoundedHttpServer::Admit(const std::string& peer, bool loopback) {
  if (limits_.max_connections_per_client <= 0 || (loopback && !limits_.limit_loopback)) {
    return Admission::kUncounted;
  }
  std::lock_guard lock(mu_);
  int& open = open_by_client_[peer];
  if (open >= limits_.max_connections_per_client) return Admission::kRefused;
  ++open;
  return Admission::kCounted;
}

void BoundedHttpServer::Release(const std::string& peer) {
  std::lock_guard lock(mu_);
  auto it = open_by_client_.find(peer);
  if (it != open_by_client_.end() && --it->second <= 0) open_by_client_.erase(it);
}

// What the server keeps with a connection while the reactor or a worker holds it.
struct BoundedHttpServer::Served : ConnectionReactor::Payload {
  ConnectionState state;
  std::string peer;
  Admission admission = Admission::kUncounted;
};

// Called on the listener's thread for each accepted connection (httplib's accept loop, with the
// inline task queue): who it is, whether its client may open it, then to the reactor.
bool BoundedHttpServer::process_and_close_socket(socket_t sock) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  auto served = std::make_unique<Served>();
  ConnectionInfo& info = served->state.info;
  info.id = next_connection_id_.fetch_add(1);
  served->peer = "unknown";
  bool exempt = false;
  if (::getpeername(sock, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    if (address.ss_family == AF_UNIX) {
      info.unix_socket = true;
      ucred credentials{};
      socklen_t size = sizeof(credentials);
      if (::getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0) {
        info.pid = credentials.pid;
        info.uid = static_cast<int>(credentials.uid);
        info.gid = static_cast<int>(credentials.gid);
      }
      served->peer = "uid " + std::to_string(info.uid);
      exempt = true;  // the socket file's mode decides who connects
    } else {
      served->peer = NumericHost(address, length);
      info.peer_address = served->peer;
      info.loopback = IsLoopbackAddress(address);
      exempt = info.loopback;
      int one = 1;
      ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));  // no 40 ms delayed-ACK wait
    }
  }
  auto connection = std::make_unique<ConnectionReactor::Connection>();
  connection->fd = sock;
  served->admission = Admit(served->peer, exempt);
  if (served->admission == Admission::kRefused) {
    if (observer_.on_cut) observer_.on_cut(ConnectionCut::kClientLimit);
    connection->refusal_status = 503;
    connection->refusal = "too many connections from " + served->peer + " (limit " +
                          std::to_string(limits_.max_connections_per_client) +
                          ", --max-connections-per-client); retry later";
  }
  connection->payload = std::move(served);
  reactor_.Add(std::move(connection));
  return true;
}

void BoundedHttpServer::Closed(ConnectionReactor::Connection& connection) {
  auto& served = static_cast<Served&>(*connection.payload);
  if (served.admission == Admission::kCounted) Release(served.peer);
  served.admission = Admission::kUncounted;
  if (observer_.on_connection_closed) observer_.on_connection_closed(served.state.info);
}

// On a worker: one request of `connection` (all there, or its body for httplib to read within
// the request's deadline); then the connection goes back to the reactor, or is closed.
void BoundedHttpServer::Serve(std::unique_ptr<ConnectionReactor::Connection> connection) {
  auto& served = static_cast<Served&>(*connection->payload);
  ConnectionState& state = served.state;
  DeadlineStream stream(connection->fd, ToMilliseconds(read_timeout_sec_, read_timeout_usec_),
                        ToMilliseconds(write_timeout_sec_, write_timeout_usec_), svr_sock_,
                        std::move(connection->buffered));
  connection->buffered.clear();
  state.stream = &stream;
  state.close_after_response = false;
  state.deferred = nullptr;
  t_connection = &state;
  t_server = this;
  stream.Arm(connection->request_began + limits_.request_timeout);
  if (observer_.on_request_begin) observer_.on_request_begin();
  const bool last = ++connection->requests >= keep_alive_max_count_;
  bool connection_closed = false;
  const bool ok = process_request(stream, /*close_connection=*/last, connection_closed, nullptr);
  const bool timed_out = stream.timed_out();
  stream.Disarm();
  if (timed_out && observer_.on_cut) observer_.on_cut(ConnectionCut::kRequestTimeout);
  const bool cut = timed_out || state.close_after_response;
  t_connection = nullptr;
  t_server = nullptr;
  state.stream = nullptr;
  if (state.deferred != nullptr && ok) {
    // The connection waits in the reactor for its answer (no longer this worker).
    connection->awaiting = std::move(state.deferred);
    connection->close_after_response = connection_closed || cut || last || stopping();
    connection->buffered = stream.TakeUnread();
    connection->keep_open_while_idle = state.keep_open_while_idle;
    reactor_.Add(std::move(connection));
    return;
  }
  state.deferred = nullptr;
  connection->in_request = false;
  if (ok && !connection_closed && !cut && !last && !stopping()) {
    connection->buffered = stream.TakeUnread();
    connection->keep_open_while_idle = state.keep_open_while_idle;
    reactor_.Add(std::move(connection));
    return;
  }
  Closed(*connection);
  CloseSocket(connection->fd, /*drain=*/cut);
}

std::shared_ptr<DeferredResponse> BoundedHttpServer::Defer(const httplib::Request& req, DeferredResponse::Ends ends) {
  if (t_connection == nullptr || t_server == nullptr) return nullptr;
  if (t_connection->deferred == nullptr) {
    std::function<void(int)> on_sent;
    if (t_server->observer_.on_defer) on_sent = t_server->observer_.on_defer();
    t_connection->deferred =
        std::make_shared<DeferredResponse>(t_server->reactor_.mailbox(), t_connection->stream->socket(),
                                           req.method == "HEAD", std::move(ends), std::move(on_sent));
    t_connection->stream->DiscardWrites();
  }
  return t_connection->deferred;
}

std::shared_ptr<DeferredResponse> BoundedHttpServer::StreamEvery(const httplib::Request& req, int status,
                                                                 std::string content_type,
                                                                 DeferredResponse::Headers headers,
                                                                 std::chrono::steady_clock::duration period,
                                                                 PeriodicStreams::Produce produce) {
  if (t_connection == nullptr || t_server == nullptr) return nullptr;
  BoundedHttpServer* server = t_server;
  // The stream's id, known once it is added; its client cannot go before the handler returns.
  auto id = std::make_shared<std::atomic<uint64_t>>(0);
  auto response = Defer(req, {[server, id] { server->streams_.Remove(id->load()); }});
  if (response->StartStream(status, std::move(content_type), std::move(headers))) {
    id->store(server->streams_.Add(response, period, std::move(produce)));
  }
  return response;
}

bool BoundedHttpServer::Deferred() { return t_connection != nullptr && t_connection->deferred != nullptr; }

const ConnectionInfo* BoundedHttpServer::CurrentConnection() {
  return t_connection != nullptr ? &t_connection->info : nullptr;
}

namespace {

std::string SystemError(const std::string& what, int error) { return what + ": " + std::strerror(error); }

// The group id of a name or a number.
bool GroupId(const std::string& group, gid_t& gid, std::string& error) {
  if (!group.empty() && std::all_of(group.begin(), group.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      group.size() < 10) {
    gid = static_cast<gid_t>(std::stoul(group));
    return true;
  }
  std::vector<char> buffer(16384);
  struct group entry {};
  struct group* found = nullptr;
  int rc = 0;
  while ((rc = ::getgrnam_r(group.c_str(), &entry, buffer.data(), buffer.size(), &found)) == ERANGE &&
         buffer.size() < (size_t{1} << 20)) {
    buffer.resize(buffer.size() * 4);
  }
  if (rc != 0 || found == nullptr) {
    error = "--socket-group: no group named '" + group + "'";
    return false;
  }
  gid = found->gr_gid;
  return true;
}

}  // namespace

bool BoundedHttpServer::BindUnixSocket(const std::string& path, unsigned mode, const std::string& group,
                                       std::string& error) {
  sockaddr_un address{};
  if (path.empty() || path.size() >= sizeof(address.sun_path)) {
    error = "socket path '" + path + "' must be 1 to " + std::to_string(sizeof(address.sun_path) - 1) + " bytes";
    return false;
  }
  gid_t gid = static_cast<gid_t>(-1);
  if (!group.empty() && !GroupId(group, gid, error)) return false;
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);

  struct stat existing {};
  if (::lstat(path.c_str(), &existing) == 0) {
    if (!S_ISSOCK(existing.st_mode)) {
      error = path + " exists and is not a socket: remove it or choose another --socket";
      return false;
    }
    const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool answered =
        probe >= 0 && ::connect(probe, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
    if (probe >= 0) ::close(probe);
    if (answered) {
      error = "another process listens on " + path + " (a second agent?): stop it first";
      return false;
    }
    ::unlink(path.c_str());  // left by a process that is gone
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = SystemError("socket(AF_UNIX)", errno);
    return false;
  }
  // Created 0600 whatever the umask, so that nobody connects before the mode below is set.
  const mode_t old_umask = ::umask(0177);
  const int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  const int bind_errno = errno;
  ::umask(old_umask);
  if (bound != 0) {
    error = SystemError("cannot bind " + path, bind_errno);
    ::close(fd);
    return false;
  }
  if ((gid != static_cast<gid_t>(-1) && ::chown(path.c_str(), static_cast<uid_t>(-1), gid) != 0) ||
      ::chmod(path.c_str(), static_cast<mode_t>(mode)) != 0) {
    error = SystemError("cannot set the owner group or mode of " + path, errno);
    ::close(fd);
    ::unlink(path.c_str());
    return false;
  }
  if (::listen(fd, SOMAXCONN) != 0) {
    error = SystemError("cannot listen on " + path, errno);
    ::close(fd);
    ::unlink(path.c_str());
    return false;
  }
  unix_socket_path_ = path;
  svr_sock_ = fd;
  return true;
}

bool BoundedHttpServer::ListenOnUnixSocket(const std::string& path, unsigned mode, const std::string& group,
                                           std::string& error) {
  if (!BindUnixSocket(path, mode, group, error)) return false;
  const bool ok = listen_after_bind();
  RemoveUnixSocketFile();
  return ok;
}

void BoundedHttpServer::RemoveUnixSocketFile() {
  if (!unix_socket_path_.empty()) ::unlink(unix_socket_path_.c_str());
  unix_socket_path_.clear();
}

BoundedHttpServer::~BoundedHttpServer() {
  streams_.Stop();
  reactor_.Stop();
  if (workers_) workers_->shutdown();
  RemoveUnixSocketFile();
}

Status BoundedHttpServer::StartWorkers(size_t threads) {
  auto workers = std::make_unique<HttpThreadPool>();
  if (Status s = workers->Start(threads); !s.ok()) return s;
  workers_ = std::move(workers);
  return Status::Ok();
}

bool BoundedHttpServer::listen(const std::string& host, int port, int socket_flags) {
  return bind_to_port(host, port, socket_flags) && listen_after_bind();
}

bool BoundedHttpServer::listen_after_bind() {
  if (!workers_ && !StartWorkers(kDefaultWorkers).ok()) return false;
  ConnectionReactor::Options options;
  options.request_timeout = limits_.request_timeout;
  options.keep_alive_timeout = milliseconds(static_cast<int64_t>(keep_alive_timeout_sec_) * 1000);
  ConnectionReactor::Callbacks callbacks;
  callbacks.serve = [this](std::unique_ptr<ConnectionReactor::Connection> connection) {
    auto* raw = connection.release();
    workers_->enqueue([this, raw] { Serve(std::unique_ptr<ConnectionReactor::Connection>(raw)); });
  };
  callbacks.on_timeout = [this] {
    if (observer_.on_cut) observer_.on_cut(ConnectionCut::kRequestTimeout);
  };
  callbacks.on_close = [this](ConnectionReactor::Connection& connection) { Closed(connection); };
  callbacks.run = [this](std::function<void()> task) { workers_->enqueue(std::move(task)); };
  if (!reactor_.Start(options, std::move(callbacks)).ok()) return false;
  // httplib 0.11 listens with a backlog of 5: connections beyond it wait for SYN retransmits
  // (512 loopback connects took 11 s, against 0.03 s at SOMAXCONN), as a 1,024-rank job's would.
  // Listening again on a listening socket only sets its backlog.
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, SOMAXCONN);
  const bool ok = httplib::Server::listen_after_bind();
  // Streams end with their last chunks, written as far as their sockets take them; waiting
  // connections are closed; the requests under way finish on their workers, which then close
  // their connections (the reactor takes none back once stopped).
  streams_.Stop();
  reactor_.Stop();
  workers_->shutdown();
  return ok;
}

void BoundedHttpServer::KeepOpenWhileIdle() {
  if (t_connection != nullptr) t_connection->keep_open_while_idle = true;
}

void BoundedHttpServer::CloseAfterResponse() {
  if (t_connection != nullptr) t_connection->close_after_response = true;
}

bool BoundedHttpServer::RequestTimedOut() { return t_connection != nullptr && t_connection->stream->timed_out(); }

bool BoundedHttpServer::HasBody(const httplib::Request& req) {
  if (req.has_header("Transfer-Encoding")) return true;
  if (!req.has_header("Content-Length")) return false;
  return req.get_header_value("Content-Length") != "0";
}

BoundedHttpServer::BodyRead BoundedHttpServer::ReadBody(const httplib::Request& req,
                                                        const httplib::ContentReader& reader, size_t max_bytes,
                                                        std::string& body) {
  body.clear();
  if (!HasBody(req)) return {};
  const std::string limit_text = "larger than --max-body-bytes (" + std::to_string(max_bytes) + " bytes)";
  if (req.is_multipart_form_data()) {
    CloseAfterResponse();
    return {415,
            "multipart/form-data bodies are not accepted: send the JSON document itself as the "
            "body"};
  }
  if (req.has_header("Content-Length")) {
    const std::string text = req.get_header_value("Content-Length");
    uint64_t declared = 0;
    auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
    bool numeric = !text.empty() && text.size() <= 19 && std::all_of(text.begin(), text.end(), is_digit);
    if (!numeric) {
      CloseAfterResponse();
      return {400, "Content-Length is not a number"};
    }
    declared = std::stoull(text);
    if (declared > max_bytes) {
      CloseAfterResponse();
      return {413, "request body too large: " + text + " bytes, " + limit_text};
    }
    // One allocation of the announced size instead of doubling (and copying) as it arrives.
    if (!req.has_header("Content-Encoding")) body.reserve(static_cast<size_t>(declared));
  }
  bool too_large = false;
  bool ok = reader([&](const char* data, size_t size) {
    if (size > max_bytes - body.size()) {
      too_large = true;
      return false;
    }
    body.append(data, size);
    return true;
  });
  if (ok) return {};
  CloseAfterResponse();
  body.clear();
  body.shrink_to_fit();
  if (too_large) return {413, "request body too large: " + limit_text};
  if (RequestTimedOut()) return {408, "the request body did not arrive within --request-timeout"};
  return {400,
          "could not read the request body (cut short, or a malformed chunked or compressed "
          "encoding)"};
}

}  // namespace wattcut::http
