#include "wattcut/http/deferred_response.h"

#include <utility>

#include "wattcut/http/connection_reactor.h"
#include "wattcut/http/http_status.h"

namespace wattcut::http {

DeferredResponse::DeferredResponse(std::shared_ptr<ReactorMailbox> mailbox, int fd, bool head, Ends ends,
                                   std::function<void(int status)> on_sent)
    : mailbox_(std::move(mailbox)), fd_(fd), head_(head), ends_(std::move(ends)), on_sent_(std::move(on_sent)) {}

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
  return mailbox_->Post(shared_from_this());
}

std::optional<DeferredResponse::Outgoing> DeferredResponse::Take(bool close) {
  std::function<void(int)> on_sent;
  Outgoing out;
  {
    std::lock_guard lock(mu_);
    if (state_ != State::kSent) return std::nullopt;
    state_ = State::kTaken;
    out.status = status_;
    out.bytes = ResponseBytes(status_, body_, content_type_, close, head_);
    std::string().swap(body_);
    on_sent = std::move(on_sent_);
  }
  if (on_sent) on_sent(out.status);
  return out;
}

std::function<void()> DeferredResponse::MarkGone() {
  std::lock_guard lock(mu_);
  if (state_ != State::kWaiting) return {};
  state_ = State::kGone;
  on_sent_ = nullptr;
  return std::exchange(ends_.on_gone, nullptr);
}

std::string ResponseBytes(int status, const std::string& body, const std::string& content_type, bool close, bool head) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + StatusReasonPhrase(status) +
                    "\r\nContent-Type: " + content_type + "\r\nContent-Length: " + std::to_string(body.size()) +
                    (close ? "\r\nConnection: close" : "") + "\r\n\r\n";
  if (!head) out += body;
  return out;
}

}  // namespace wattcut::http
