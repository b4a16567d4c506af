// The one place where an error's kind becomes an HTTP status. The registry and the request
// parsers return Errors with codes (base/error_code.h); the HTTP layers (server, agent) answer
// with the status mapped here and {"error": message}.
#pragma once

#include "wattcut/base/error_code.h"

namespace wattcut::http {

// kInvalidArgument 422, kMalformed 400, kNotFound 404, kConflict and kCorruption 409 (the
// job's state, or its stored data, does not allow it), kUnavailable and kIOError 503 (retry
// later; nothing was changed), kDeadlineExceeded 504, kAborted 410 (the job went away), kPermissionDenied 403,
// kDeviceError 500 (NVML refused; the message names its error).
int HttpStatusFor(ErrorCode code);

}  // namespace wattcut::http
