// How the server's routes answer: a status with a JSON body, an HTTP-level refusal as
// {"error": message}, and the registry's Answer with the status of its error's code
// (http/http_status.h). Shared by the server's own routes (server.cc) and the job routes
// (job_routes.h).
#pragma once

#include <httplib.h>

#include <string>

#include "wattcut/server/job_registry.h"

namespace wattcut::server {

// A status and a JSON body, for the answers the server makes itself (/healthz).
struct Reply {
  int status = 200;
  std::string body;
};

// The registry's answer as a reply: `ok_status` with its JSON, or the status of its error's code
// with {"error": message}.
Reply ReplyOf(const Answer& answer, int ok_status = 200);

void SetReply(httplib::Response& res, const Reply& reply);
// An HTTP-level refusal (401, 403, 405, 408, 500): {"error": message}.
void SetError(httplib::Response& res, int status, const std::string& message);
// The registry's answer (ReplyOf).
void SetAnswer(httplib::Response& res, const Answer& answer, int ok_status = 200);

}  // namespace wattcut::server
