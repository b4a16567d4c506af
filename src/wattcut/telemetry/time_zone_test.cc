#include "wattcut/telemetry/time_zone.h"

#include <gtest/gtest.h>

#include "wattcut/base/iso_time.h"

namespace wattcut::telemetry {
namespace {

double Local(const char* text) { return *ParseTimestamp(text); }

TEST(LocalTimeZone, FixedOffsets) {
  Result<LocalTimeZone> plus = LocalTimeZone::Parse("+02:00");
  ASSERT_TRUE(plus.ok());
  EXPECT_EQ(plus->description(), "UTC+02:00");
  ZoneScope scope(*plus);
  EXPECT_EQ(scope.Instants(Local("2024-05-01 14:00:00")), std::vector<double>{Local("2024-05-01 12:00:00")});
  Result<LocalTimeZone> minus = LocalTimeZone::Parse("-05:30");
  ASSERT_TRUE(minus.ok());
  EXPECT_EQ(ZoneScope(*minus).Instants(Local("2024-05-01 00:00:00"))[0], Local("2024-05-01 05:30:00"));
  EXPECT_EQ(LocalTimeZone::Parse("Z")->description(), "UTC+00:00");
  EXPECT_EQ(LocalTimeZone::Parse("+0530")->description(), "UTC+05:30");
}

TEST(LocalTimeZone, RefusesWhatIsNotAnOffsetOrAZone) {
  EXPECT_NE(LocalTimeZone::Parse("+2:00").error().message.find("expected a UTC offset"), std::string::npos);
  EXPECT_NE(LocalTimeZone::Parse("+15:00").error().message.find("out of range"), std::string::npos);
  EXPECT_NE(LocalTimeZone::Parse("Mars/Olympus").error().message.find("not in the TZ database"), std::string::npos);
  EXPECT_FALSE(LocalTimeZone::Parse("../../etc/passwd").ok());
  EXPECT_FALSE(LocalTimeZone::Parse("").ok());
  EXPECT_FALSE(LocalTimeZone::Parse("Europe/Berlin\x1b").ok());
}

TEST(LocalTimeZone, ZoneSkipsAndRepeatsAnHour) {
  Result<LocalTimeZone> berlin = LocalTimeZone::Parse("Europe/Berlin");
  ASSERT_TRUE(berlin.ok()) << berlin.error().message;
  ZoneScope scope(*berlin);
  // Summer: UTC+2.
  EXPECT_EQ(scope.Instants(Local("2024-05-01 14:00:00.5")), std::vector<double>{Local("2024-05-01 12:00:00.5")});
  // Winter: UTC+1.
  EXPECT_EQ(scope.Instants(Local("2024-01-15 14:00:00")), std::vector<double>{Local("2024-01-15 13:00:00")});
  // 2024-03-31 02:30 does not exist (02:00 -> 03:00).
  EXPECT_TRUE(scope.Instants(Local("2024-03-31 02:30:00")).empty());
  // 2024-10-27 02:30 happens twice: 00:30 UTC (CEST) and 01:30 UTC (CET).
  EXPECT_EQ(scope.Instants(Local("2024-10-27 02:30:00")),
            (std::vector<double>{Local("2024-10-27 00:30:00"), Local("2024-10-27 01:30:00")}));
}

TEST(LocalTimeZone, ScopePutsTzBack) {
  setenv("TZ", "Asia/Tokyo", 1);
  {
    ZoneScope scope(*LocalTimeZone::Parse("America/New_York"));
    EXPECT_STREQ(getenv("TZ"), ":America/New_York");
  }
  EXPECT_STREQ(getenv("TZ"), "Asia/Tokyo");
  unsetenv("TZ");
}

}  // namespace
}  // namespace wattcut::telemetry
