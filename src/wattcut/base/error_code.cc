#include "wattcut/base/error_code.h"

namespace wattcut {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kMalformed:
      return "malformed";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kConflict:
      return "conflict";
    case ErrorCode::kCorruption:
      return "corruption";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kIOError:
      return "io_error";
    case ErrorCode::kDeadlineExceeded:
      return "deadline_exceeded";
    case ErrorCode::kAborted:
      return "aborted";
    case ErrorCode::kPermissionDenied:
      return "permission_denied";
    case ErrorCode::kDeviceError:
      return "device_error";
  }
  return "unknown";
}

}  // namespace wattcut
