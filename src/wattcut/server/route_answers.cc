#include "wattcut/server/route_answers.h"

#include "wattcut/http/error_body.h"
#include "wattcut/http/http_status.h"

namespace wattcut::server {

void SetReply(httplib::Response& res, const Reply& reply) {
  res.status = reply.status;
  res.set_content(reply.body, "application/json");
}

void SetError(httplib::Response& res, int status, const std::string& message) {
  SetReply(res, Reply{status, http::ErrorBody(message)});
}

Reply ReplyOf(const Answer& answer, int ok_status) {
  if (answer) return Reply{ok_status, *answer};
  return Reply{http::HttpStatusFor(answer.error().code), http::ErrorBody(answer.error().message)};
}

void SetAnswer(httplib::Response& res, const Answer& answer, int ok_status) {
  SetReply(res, ReplyOf(answer, ok_status));
}

}  // namespace wattcut::server
