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

}  // namespace
}  // namespace wattcut::http
