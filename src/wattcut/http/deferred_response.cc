#include "wattcut/http/deferred_response.h"

#include <cstdio>
#include <utility>

#include "wattcut/http/connection_reactor.h"
#include "wattcut/http/http_status.h"

namespace wattcut::http {

DeferredResponse::DeferredResponse(std::shared_ptr<ReactorMailbox> mailbox, int fd, bool head, Ends ends,
                                   std::function<void(int status)> on_sent)
    : mailbox_(std::move(mailbox)), fd_(fd), head_(head), ends_(std::move(ends)), on_sent_(std::move(on_sent)) {}

bool DeferredResponse::Post() { return mailbox_->Post(shared_from_this()); }

bool DeferredResponse::Send(int status, std::string body, std::string content_type) {
  {
    std::lock_guard lock(mu_);
    if (state_ != State::kWaiting) return false;
    state_ = State::kSent;
    status_ = status;
    body_ = std::move(body);
    content_type_ = std::move(content_type);
    ends_ = {};  // nothing the owner handed over is kept past its answer
  }
  return Post();
}

bool DeferredResponse::StartStream(int status, std::string content_type, Headers headers) {
  {
    std::lock_guard lock(mu_);
    if (state_ != State::kWaiting) return false;
    state_ = State::kStreaming;
    status_ = status;
    content_type_ = std::move(content_type);
    headers_ = std::move(headers);
  }
  return Post();
}

bool DeferredResponse::SendChunk(const std::string& data) {
  if (data.empty()) return !over();
  bool cut_off = false;
  {
    std::lock_guard lock(mu_);
    if (state_ != State::kStreaming) return false;
    cut_off = client_blocked_ && body_.size() >= kMaxUnsentStreamBytes;
    if (cut_off) {
      // Its client does not keep up: the stream is over, and the reactor closes the connection.
      state_ = State::kGone;
      ends_ = {};
      on_sent_ = nullptr;
      std::string().swap(body_);
    } else if (!head_) {
      body_ += Chunk(data);
    }
  }
  return Post() && !cut_off;
}

bool DeferredResponse::EndStream() {
  {
    std::lock_guard lock(mu_);
    if (state_ != State::kStreaming) return false;
    state_ = State::kEnded;
    if (!head_) body_ += Chunk("");
    ends_ = {};
  }
  return Post();
}

bool DeferredResponse::over() const {
  std::lock_guard lock(mu_);
  return state_ == State::kTaken || state_ == State::kGone || state_ == State::kEnded || state_ == State::kSent;
}

bool DeferredResponse::cut_off() const {
  std::lock_guard lock(mu_);
  return state_ == State::kGone;
}

std::optional<DeferredResponse::Outgoing> DeferredResponse::Take(bool close) {
  std::function<void(int)> on_sent;
  Outgoing out;
  {
    std::lock_guard lock(mu_);
    switch (state_) {
      case State::kSent:
        state_ = State::kTaken;
        out.bytes = ResponseBytes(status_, body_, content_type_, close, head_);
        std::string().swap(body_);
        break;
      case State::kStreaming:
      case State::kEnded:
        if (!head_taken_) {
          out.bytes = ResponseHead(status_, content_type_, std::nullopt, close, headers_);
          head_taken_ = true;
          Headers().swap(headers_);
        } else if (body_.empty() && state_ == State::kStreaming) {
          return std::nullopt;  // nothing new
        }
        out.bytes += body_;
        body_.clear();
        out.last = state_ == State::kEnded;
        if (out.last) state_ = State::kTaken;
        break;
      default:
        return std::nullopt;
    }
    out.status = status_;
    on_sent = std::exchange(on_sent_, nullptr);
  }
  if (on_sent) on_sent(out.status);
  return out;
}

void DeferredResponse::SetClientBlocked(bool blocked) {
  std::lock_guard lock(mu_);
  client_blocked_ = blocked;
}

std::function<void()> DeferredResponse::MarkGone() {
  std::lock_guard lock(mu_);
  if (state_ != State::kWaiting && state_ != State::kStreaming && state_ != State::kEnded) return {};
  state_ = State::kGone;
  on_sent_ = nullptr;
  body_.clear();
  return std::exchange(ends_.on_gone, nullptr);
}

std::string ResponseHead(int status, const std::string& content_type, std::optional<size_t> length, bool close,
                         const DeferredResponse::Headers& headers) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + StatusReasonPhrase(status) +
                    "\r\nContent-Type: " + content_type + "\r\n" +
                    (length ? "Content-Length: " + std::to_string(*length) : std::string("Transfer-Encoding: chunked"));
  for (const auto& [name, value] : headers) out += "\r\n" + name + ": " + value;
  if (close) out += "\r\nConnection: close";
  return out + "\r\n\r\n";
}

std::string ResponseBytes(int status, const std::string& body, const std::string& content_type, bool close, bool head) {
  std::string out = ResponseHead(status, content_type, body.size(), close);
  if (!head) out += body;
  return out;
}

std::string Chunk(const std::string& data) {
  char size[24];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

}  // namespace wattcut::http
