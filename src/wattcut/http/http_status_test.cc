#include "wattcut/http/http_status.h"

#include <gtest/gtest.h>

namespace wattcut::http {
namespace {

TEST(HttpStatus, EachErrorCodeHasTheStatusTheApiDocuments) {
  EXPECT_EQ(HttpStatusFor(ErrorCode::kInvalidArgument), 422);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kMalformed), 400);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kConflict), 409);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kCorruption), 409);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kIOError), 503);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kAborted), 410);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kPermissionDenied), 403);
  EXPECT_EQ(HttpStatusFor(ErrorCode::kDeviceError), 500);
}

TEST(HttpStatus, AnAnswersErrorKeepsTheServicesMessageAndCode) {
  Error named = ErrorOfAnswer(409, R"j({"error":"GPU 0 is leased by pid 4242 (uid 1000)","code":"conflict"})j");
  EXPECT_EQ(named.message, "GPU 0 is leased by pid 4242 (uid 1000)");
  EXPECT_EQ(named.code, ErrorCode::kConflict);
  EXPECT_EQ(ErrorOfAnswer(500, R"({"error":"NVML_ERROR_NO_PERMISSION","code":"device_error"})").code,
            ErrorCode::kDeviceError);
  EXPECT_EQ(ErrorOfAnswer(401, R"({"error":"invalid bearer token","code":"unauthenticated"})").code,
            ErrorCode::kPermissionDenied)
      << "a code this side does not know: the status's";
  Error plain = ErrorOfAnswer(502, "<html>bad gateway</html>");
  EXPECT_EQ(plain.message, "HTTP 502: '<html>bad gateway</html>'");
  EXPECT_EQ(plain.code, ErrorCode::kDeviceError);
  EXPECT_EQ(ErrorCodeForStatus(422), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorCodeForStatus(404), ErrorCode::kNotFound);
  // A service's own meaning of a 5xx (the planning server's: retry later); 503 and 504 keep theirs.
  EXPECT_EQ(ErrorCodeForStatus(500, ErrorCode::kUnavailable), ErrorCode::kUnavailable);
  EXPECT_EQ(ErrorCodeForStatus(502, ErrorCode::kUnavailable), ErrorCode::kUnavailable);
  EXPECT_EQ(ErrorCodeForStatus(504, ErrorCode::kUnavailable), ErrorCode::kDeadlineExceeded);
  EXPECT_EQ(ErrorCodeForStatus(500), ErrorCode::kDeviceError);
  for (ErrorCode code : {ErrorCode::kMalformed, ErrorCode::kNotFound, ErrorCode::kConflict, ErrorCode::kAborted,
                         ErrorCode::kUnavailable, ErrorCode::kDeadlineExceeded, ErrorCode::kPermissionDenied,
                         ErrorCode::kDeviceError, ErrorCode::kInvalidArgument}) {
    EXPECT_EQ(ErrorCodeForStatus(HttpStatusFor(code)), code) << ErrorCodeName(code);
  }
}

}  // namespace
}  // namespace wattcut::http
