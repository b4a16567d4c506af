#include "wattcut/server/http_status.h"

namespace wattcut::server {

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
  }
  return 500;
}

}  // namespace wattcut::server
