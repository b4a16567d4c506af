#include "wattcut/deadline/step_series.h"

#include <gtest/gtest.h>

namespace wattcut::deadline {
namespace {

const StepSeriesSpec kPrice{"price", {}, 0, false};

TEST(StepSeriesTest, ReadsIsoTimesAndHoldsEachValueUntilTheNext) {
  Result<StepSeries> s = ParseStepSeries(
      "time,price\n2026-12-02T00:00Z,0.20\n2026-12-02 02:00:00+01:00,0.30\n2026-12-02T02:00:00.5Z,0.1\n", "p.csv",
      kPrice);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->steps.size(), 3u);
  EXPECT_EQ(s->value_name, "price");
  const double t0 = s->steps[0].time_s;
  EXPECT_DOUBLE_EQ(s->steps[1].time_s - t0, 3600);  // 02:00+01:00 is 01:00Z
  EXPECT_EQ(s->At(t0 - 1), nullptr);
  EXPECT_DOUBLE_EQ(s->At(t0)->value, 0.20);
  EXPECT_DOUBLE_EQ(s->At(t0 + 3599)->value, 0.20);
  EXPECT_DOUBLE_EQ(s->At(t0 + 3600)->value, 0.30);
  EXPECT_DOUBLE_EQ(s->At(t0 + 1e6)->value, 0.1);
  EXPECT_EQ(s->At(t0 + 1e6)->line, 4);
  // 01:00+01:00 is 00:00Z, the first row's time.
  Result<StepSeries> same =
      ParseStepSeries("time,price\n2026-12-02T00:00:00Z,0.2\n2026-12-02T01:00:00+01:00,0.3\n", "p.csv", kPrice);
  ASSERT_FALSE(same.ok());
  EXPECT_NE(same.error().message.find("is the same as line 2's"), std::string::npos) << same.error().message;
}

TEST(StepSeriesTest, ReadsSecondsSince1970) {
  Result<StepSeries> s = ParseStepSeries("time,gco2_per_kwh\n1000,300\n4600,250.5\n", "c.csv", kPrice);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_DOUBLE_EQ(s->At(4600)->value, 250.5);
}

struct BadCase {
  const char* text;
  const char* message;
};

TEST(StepSeriesTest, BadInputNamesTheFileLineAndField) {
  const StepSeriesSpec budget{"power budget", {"watts", "watts_per_gpu"}, 0, true};
  const BadCase cases[] = {
      {"time,price\n2026-12-02T01:00Z,0.2\n2026-12-02T00:00Z,0.3\n",
       "p.csv:3: column 'time': times must increase: '2026-12-02T00:00Z' is before line 2's"},
      {"time,price\n100,0.2\n100,0.3\n", "p.csv:3: column 'time': times must increase: '100' is the same as line 2's"},
      {"time,price\n100,nan\n", "p.csv:2: column 'price': expected a finite number, got 'nan'"},
      {"time,price\n100,-0.05\n", "p.csv:2: column 'price': expected a price >= 0, got '-0.05'"},
      {"time,price\n100,0.2\n2026-12-02T00:00Z,0.3\n", "p.csv:3: column 'time': expected seconds since 1970 like"},
      {"time,price\n2026-13-02T00:00Z,0.2\n", "p.csv:2: column 'time': "},
      {"when,price\n100,0.2\n", "p.csv:1: expected the header 'time,VALUE'"},
      // The whole header is quoted (before: 'time,price', the third column dropped).
      {"time,price,extra\n100,0.2,1\n",
       "p.csv:1: expected the header 'time,VALUE' (two columns, the first 'time') for the price, got "
       "'time,price,extra'"},
      // A time no date can say (before: quoted as '-290308-12-22 -4:00:-54.-775808').
      {"time,price\n1e300,0.2\n",
       "p.csv:2: column 'time': expected an ISO 8601 time or seconds since 1970 (0 to "
       "253402300799, the end of 9999), got '1e300'"},
      {"time,price\n-5,0.2\n", "p.csv:2: column 'time': expected an ISO 8601 time or seconds since 1970 (0 to"},
      {"time,price\n", "p.csv: no rows"},
  };
  for (const BadCase& c : cases) {
    Result<StepSeries> s = ParseStepSeries(c.text, "p.csv", kPrice);
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_EQ(s.error().message.rfind(c.message, 0), 0u) << s.error().message;
  }
  Result<StepSeries> b = ParseStepSeries("time,kw\n100,5\n", "b.csv", budget);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message, "b.csv:1: column 2: expected 'watts', 'watts_per_gpu' for the power budget, got 'kw'");
  Result<StepSeries> zero = ParseStepSeries("time,watts\n100,0\n", "b.csv", budget);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "b.csv:2: column 'watts': expected a power budget > 0, got '0'");
}

TEST(StepSeriesTest, AMissingFileIsNamed) {
  Result<StepSeries> s = ReadStepSeries("/nonexistent/prices.csv", kPrice);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("/nonexistent/prices.csv"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace wattcut::deadline
