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

std::optional<ErrorCode> ErrorCodeFromName(std::string_view name) {
  for (ErrorCode code :
       {ErrorCode::kInvalidArgument, ErrorCode::kMalformed, ErrorCode::kNotFound, ErrorCode::kConflict,
        ErrorCode::kCorruption, ErrorCode::kUnavailable, ErrorCode::kIOError, ErrorCode::kDeadlineExceeded,
        ErrorCode::kAborted, ErrorCode::kPermissionDenied, ErrorCode::kDeviceError}) {
    if (ErrorCodeName(code) == name) return code;
  }
  return std::nullopt;
}

}  // namespace wattcut
