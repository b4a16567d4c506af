#include "wattcut/http/http_status.h"

namespace wattcut::http {

int HttpStatusFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return 422;
    case ErrorCode::kMalformed:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kConflict:
    case ErrorCode::kCorruption:
      return 409;
    case ErrorCode::kUnavailable:
    case ErrorCode::kIOError:
      return 503;
    case ErrorCode::kDeadlineExceeded:
      return 504;
    case ErrorCode::kAborted:
      return 410;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kDeviceError:
      return 500;
  }
  return 500;
}

}  // namespace wattcut::http
