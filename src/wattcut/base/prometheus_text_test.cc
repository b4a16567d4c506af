#include "wattcut/base/prometheus_text.h"

#include <gtest/gtest.h>

#include <limits>

namespace wattcut {
namespace {

TEST(PrometheusText, ValuesReadBackExactlyAndNonFiniteOnesAreTheFormats) {
  EXPECT_EQ(PrometheusValue(266.172), "266.172");
  EXPECT_EQ(PrometheusValue(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(PrometheusValue(1e-9), "1e-09");
  EXPECT_EQ(PrometheusValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(PrometheusValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(PrometheusValue(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(PrometheusText, LabelValuesArePrintableThenEscaped) {
  EXPECT_EQ(PrometheusLabelValue("plain"), "plain");
  EXPECT_EQ(PrometheusLabelValue("a\"b"), "a\\\"b");
  EXPECT_EQ(PrometheusLabelValue("a\\b"), "a\\\\b");
  EXPECT_EQ(PrometheusLabelValue("a\nb"), "a\\\\x0ab");  // made printable first: \x0a, its backslash escaped
  EXPECT_EQ(PrometheusLabelValue("a\x1b[2J"), "a\\\\x1b[2J");
  EXPECT_EQ(PrometheusLabelValue("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(PrometheusLabelValue(std::string(300, 'x')), std::string(256, 'x') + "...");
}

}  // namespace
}  // namespace wattcut
