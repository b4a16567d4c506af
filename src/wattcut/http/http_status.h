// The one place where an error's kind becomes an HTTP status. The registry and the request
// parsers return Errors with codes (base/error_code.h); the HTTP layers (server, agent) answer
// with the status mapped here and {"error": message}.
#pragma once

#include <string_view>

#include "wattcut/base/error_code.h"
#include "wattcut/base/result.h"

namespace wattcut::http {

// kInvalidArgument 422, kMalformed 400, kNotFound 404, kConflict and kCorruption 409 (the
// job's state, or its stored data, does not allow it), kUnavailable and kIOError 503 (retry
// later; nothing was changed), kDeadlineExceeded 504, kAborted 410 (the job went away), kPermissionDenied 403,
// kDeviceError 500 (NVML refused; the message names its error).
int HttpStatusFor(ErrorCode code);

// The words for an error status that has no message of its own (httplib's 404 for an unknown
// route, its 400 for a request line it cannot read, a 408): "no such endpoint", "bad request".
const char* HttpStatusText(int status);

// The reason phrase of a status line (RFC 9110's: "OK", "Gateway Timeout"), for a response the
// server writes itself (deferred_response.h); "Unknown" for a status it does not know.
const char* StatusReasonPhrase(int status);

// The other way, for a client: the code of an answer's status (401 and 403 are
// kPermissionDenied, other 4xx kInvalidArgument, 503 kUnavailable, 504 kDeadlineExceeded). What
// any other 5xx means is the service's: `server_error`, kDeviceError for the node agent (a 500 is
// NVML refusing), kUnavailable for the planning server (any 5xx: retry later).
ErrorCode ErrorCodeForStatus(int status, ErrorCode server_error = ErrorCode::kDeviceError);

// The Error of a refused request, as wattcut's services answer one ({"error": message, "code":
// name}): that message, with the named code, else the status's (`server_error` for a 5xx, as
// ErrorCodeForStatus). A body that is not such an object gives "HTTP <status>: '<body>'".
Error ErrorOfAnswer(int status, std::string_view body, ErrorCode server_error = ErrorCode::kDeviceError);

// A client's refused request as an error of the answer's code: "WHAT: the SERVICE answered STATUS:
// MESSAGE" (ErrorOfAnswer's message; a 5xx other than 503 and 504 is kUnavailable: retry later).
Error RefusalOf(int status, std::string_view body, const std::string& what, const std::string& service);

}  // namespace wattcut::http
