#include "wattcut/base/iso_time.h"

#include <gtest/gtest.h>

namespace wattcut {
namespace {

TEST(ParseTimestamp, ReadsAzureFormatAndRejectsNonsense) {
  EXPECT_DOUBLE_EQ(*ParseTimestamp("1970-01-01 00:00:00"), 0);
  EXPECT_DOUBLE_EQ(*ParseTimestamp("2023-11-16 18:15:46.6805900"), 1700158546.68059);
  EXPECT_DOUBLE_EQ(*ParseTimestamp("2024-02-29 00:00:01.5") - *ParseTimestamp("2024-02-28 00:00:00"), 86401.5);
  EXPECT_FALSE(ParseTimestamp("2023-11-16").ok());
  EXPECT_FALSE(ParseTimestamp("2023/11/16 18:15:46").ok());
  EXPECT_NE(ParseTimestamp("2023-02-29 00:00:00").error().message.find("day out of range"), std::string::npos);
  EXPECT_NE(ParseTimestamp("2023-13-01 00:00:00").error().message.find("month out of range"), std::string::npos);
  EXPECT_NE(ParseTimestamp("2023-11-16 25:00:00").error().message.find("time of day"), std::string::npos);
  EXPECT_FALSE(ParseTimestamp("2023-11-16 18:15:46.").ok());
  EXPECT_FALSE(ParseTimestamp("2023-11-16 18:15:46.12x").ok());
}

TEST(ParseIsoTime, ReadsUtcAndOffsets) {
  EXPECT_DOUBLE_EQ(*ParseIsoTime("1970-01-01T00:00:00Z"), 0);
  EXPECT_DOUBLE_EQ(*ParseIsoTime("1970-01-01 00:00:01.25"), 1.25);
  EXPECT_NEAR(*ParseIsoTime("2024-05-01T12:00:00.123456Z") - *ParseIsoTime("2024-05-01T12:00:00Z"), 0.123456, 1e-6);
  // 14:00 at +02:00 is 12:00 UTC; 07:30 at -04:30 is 12:00 UTC.
  EXPECT_DOUBLE_EQ(*ParseIsoTime("2024-05-01T14:00:00+02:00"), *ParseIsoTime("2024-05-01T12:00:00Z"));
  EXPECT_DOUBLE_EQ(*ParseIsoTime("2024-05-01T07:30:00-04:30"), *ParseIsoTime("2024-05-01T12:00:00Z"));
  EXPECT_FALSE(ParseIsoTime("2024-05-01").ok());
  EXPECT_FALSE(ParseIsoTime("2024-05-01T12:00:00+2:00").ok());
  EXPECT_NE(ParseIsoTime("2024-05-01T12:00:00+25:00").error().message.find("UTC offset out of range"),
            std::string::npos);
  // ISO 8601 may leave out the seconds (`wattcut plan schedule --deadline 2026-12-09T00:00Z`), not the minutes.
  EXPECT_DOUBLE_EQ(*ParseIsoTime("2024-05-01T12:00"), *ParseIsoTime("2024-05-01T12:00:00Z"));
  EXPECT_DOUBLE_EQ(*ParseIsoTime("2024-05-01T14:00+02:00"), *ParseIsoTime("2024-05-01T12:00:00Z"));
  EXPECT_NE(ParseIsoTime("2024-05-01T12").error().message.find("expected an ISO 8601 UTC time"), std::string::npos);
}

TEST(LooksLikeIsoDate, OnlyAYearAndADash) {
  EXPECT_TRUE(LooksLikeIsoDate("2024-05-01T12:00:00Z"));
  EXPECT_FALSE(LooksLikeIsoDate("1714564800.5"));
  EXPECT_FALSE(LooksLikeIsoDate("2024/05/01"));
  EXPECT_FALSE(LooksLikeIsoDate(""));
}

TEST(DaysFromCivil, KnownDays) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(2024, 5, 1), 19844);
  EXPECT_EQ(DaysInMonth(2024, 2), 29);
  EXPECT_EQ(DaysInMonth(2100, 2), 28);
}

}  // namespace
}  // namespace wattcut
