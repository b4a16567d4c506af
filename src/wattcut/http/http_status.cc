#include "wattcut/http/http_status.h"

#include <nlohmann/json.hpp>
#include <string>

#include "wattcut/base/json_object.h"
#include "wattcut/base/printable_text.h"

namespace wattcut::http {

const char* HttpStatusText(int status) {
  switch (status) {
    case 400:
      return "bad request";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "no such endpoint";
    case 405:
      return "method not allowed";
    case 408:
      return "request timeout";
    case 413:
      return "request body too large";
    case 414:
      return "request URI too long";
    case 431:
      return "request header fields too large";
    case 503:
      return "service unavailable";
    default:
      return "request failed";
  }
}

const char* StatusReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Unknown";
  }
}

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

ErrorCode ErrorCodeForStatus(int status, ErrorCode server_error) {
  switch (status) {
    case 400:
      return ErrorCode::kMalformed;
    case 401:
    case 403:
      return ErrorCode::kPermissionDenied;
    case 404:
      return ErrorCode::kNotFound;
    case 409:
      return ErrorCode::kConflict;
    case 410:
      return ErrorCode::kAborted;
    case 503:
      return ErrorCode::kUnavailable;
    case 504:
      return ErrorCode::kDeadlineExceeded;
    default:
      return status >= 500 ? server_error : ErrorCode::kInvalidArgument;
  }
}

Error ErrorOfAnswer(int status, std::string_view body, ErrorCode server_error) {
  const nlohmann::json doc = ParseJsonOrDiscarded(body);
  if (doc.is_object() && doc.contains("error") && doc["error"].is_string()) {
    ErrorCode code = ErrorCodeForStatus(status, server_error);
    if (doc.contains("code") && doc["code"].is_string()) {
      if (auto named = ErrorCodeFromName(doc["code"].get<std::string>())) code = *named;
    }
    return Error{doc["error"].get<std::string>(), code};
  }
  return Error{"HTTP " + std::to_string(status) + ": '" + PrintableText(body, 200) + "'",
               ErrorCodeForStatus(status, server_error)};
}

Error RefusalOf(int status, std::string_view body, const std::string& what, const std::string& service) {
  const Error refused = ErrorOfAnswer(status, body, ErrorCode::kUnavailable);
  return Error{what + ": the " + service + " answered " + std::to_string(status) + ": " + refused.message,
               refused.code};
}

}  // namespace wattcut::http
