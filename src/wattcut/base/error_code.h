// What kind of failure an Error is, LevelDB style: the code says what the caller can do
// about it (fix the input, look elsewhere, retry later), the message says what was wrong.
// Library code picks a code; only a boundary maps codes to its own vocabulary (the HTTP
// layer to statuses: http/http_status.h; the CLI to exit codes).
#pragma once

#include <optional>
#include <string_view>

namespace wattcut {

enum class ErrorCode {
  kInvalidArgument,   // the input is wrong: a field out of range, a file that does not parse
  kMalformed,         // the input is not even well-formed (a JSON syntax error)
  kNotFound,          // the thing named does not exist
  kConflict,          // the request does not fit the current state (already done, not yet possible)
  kCorruption,        // stored data cannot be read back
  kUnavailable,       // try again later: shutting down, overloaded
  kIOError,           // the disk or the store failed; nothing was changed
  kDeadlineExceeded,  // waited as long as allowed
  kAborted,           // the thing waited on went away (deleted) while waiting
  kPermissionDenied,  // this caller may not do it (it does not hold what it acts on)
  kDeviceError,       // the device or its driver refused (an NVML error, named in the message)
};

// "invalid_argument", "not_found", ...: for logs and JSON.
std::string_view ErrorCodeName(ErrorCode code);
// The code whose ErrorCodeName is `name` (what a service's {"code": ...} carries); nullopt for none.
std::optional<ErrorCode> ErrorCodeFromName(std::string_view name);

}  // namespace wattcut
