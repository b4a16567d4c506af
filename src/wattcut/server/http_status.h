// The one place where an error's kind becomes an HTTP status. The registry and the request
// parsers return Errors with codes (base/error_code.h); the HTTP layer (server.cc) answers
// with the status mapped here and {"error": message}.
#pragma once

#include "wattcut/base/error_code.h"

namespace wattcut::server {

// kInvalidArgument 422, kMalformed 400, kNotFound 404, kConflict and kCorruption 409 (the
// job's state, or its stored data, does not allow it), kUnavailable and kIOError 503 (retry
// later; nothing was changed), kDeadlineExceeded 504, kAborted 410 (the job went away).
int HttpStatusFor(ErrorCode code);

}  // namespace wattcut::server
