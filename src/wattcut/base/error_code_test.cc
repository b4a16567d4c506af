#include "wattcut/base/error_code.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "wattcut/base/result.h"

namespace wattcut {
namespace {

TEST(ErrorCode, APlainErrorIsAnInvalidArgument) {
  Error error{"stage must be >= 0"};
  EXPECT_EQ(error.code, ErrorCode::kInvalidArgument);
  Result<int> result = Error{"x"};
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
}

TEST(ErrorCode, NamedConstructorsCarryTheirCode) {
  EXPECT_EQ(Error::NotFound("m").code, ErrorCode::kNotFound);
  EXPECT_EQ(Error::Conflict("m").code, ErrorCode::kConflict);
  EXPECT_EQ(Error::Unavailable("m").code, ErrorCode::kUnavailable);
  EXPECT_EQ(Error::IOError("m").code, ErrorCode::kIOError);
  EXPECT_EQ(Error::Corruption("m").code, ErrorCode::kCorruption);
  EXPECT_EQ(Error::Malformed("m").code, ErrorCode::kMalformed);
  EXPECT_EQ(Error::DeadlineExceeded("m").code, ErrorCode::kDeadlineExceeded);
  EXPECT_EQ(Error::Aborted("m").code, ErrorCode::kAborted);
  EXPECT_EQ(Error::PermissionDenied("m").code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(Error::DeviceError("m").code, ErrorCode::kDeviceError);
  EXPECT_EQ(Error::InvalidArgument("m").message, "m");
}

TEST(ErrorCode, ContextKeepsTheCode) {
  Error e = Error::NotFound("no such job").WithContext("GET /v1/jobs/x: ");
  EXPECT_EQ(e.message, "GET /v1/jobs/x: no such job");
  EXPECT_EQ(e.code, ErrorCode::kNotFound);
  Status s = Error::IOError("disk full");
  EXPECT_EQ(s.error().code, ErrorCode::kIOError);
}

TEST(ErrorCode, EveryCodeHasItsOwnName) {
  std::set<std::string> names;
  for (ErrorCode c :
       {ErrorCode::kInvalidArgument, ErrorCode::kMalformed, ErrorCode::kNotFound, ErrorCode::kConflict,
        ErrorCode::kCorruption, ErrorCode::kUnavailable, ErrorCode::kIOError, ErrorCode::kDeadlineExceeded,
        ErrorCode::kAborted, ErrorCode::kPermissionDenied, ErrorCode::kDeviceError}) {
    names.insert(std::string(ErrorCodeName(c)));
  }
  EXPECT_EQ(names.size(), 11u);
  for (const std::string& name : names) EXPECT_EQ(ErrorCodeName(*ErrorCodeFromName(name)), name);
  EXPECT_EQ(ErrorCodeFromName("unauthenticated"), std::nullopt);
  EXPECT_EQ(ErrorCodeName(ErrorCode::kNotFound), "not_found");
}

}  // namespace
}  // namespace wattcut
