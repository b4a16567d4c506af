#include "wattcut/polca/polca_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace wattcut::polca {
namespace {

TEST(PolcaConfig, BuiltInsAreValidAndDiffer) {
  for (const std::string& name : BuiltInConfigNames()) {
    Result<PolcaConfig> c = BuiltInConfig(name);
    ASSERT_TRUE(c.ok()) << name;
    EXPECT_TRUE(Validate(*c).ok()) << name << ": " << Validate(*c).error().message;
  }
  EXPECT_DOUBLE_EQ(BuiltInConfig("a100")->gpu.tdp_w, 400);
  EXPECT_DOUBLE_EQ(BuiltInConfig("h100")->gpu.tdp_w, 700);
  EXPECT_DOUBLE_EQ(BuiltInConfig("mi300x")->gpu.tdp_w, 750);
  EXPECT_DOUBLE_EQ(BuiltInConfig("mi300x")->gpu.max_freq_mhz, 2100);
  EXPECT_NE(BuiltInConfig("tpu").error().message.find("unknown built-in config 'tpu'"), std::string::npos);
}

TEST(PolcaConfig, FileOverridesABaseAndRoundTrips) {
  Result<PolcaConfig> c = ParseConfig(
      "# my row\n"
      "base = h100\n"
      "\n"
      "policy.t1 = 0.7   # lower first threshold\n"
      "policy.t1_release = 0.65\n"
      "service.max_batch = 48\n"
      "gpu.name = H100 measured\n",
      "row.conf");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_DOUBLE_EQ(c->policy.t1, 0.7);
  EXPECT_EQ(c->service.max_batch, 48);
  EXPECT_EQ(c->gpu.name, "H100 measured");
  EXPECT_DOUBLE_EQ(c->gpu.tdp_w, 700);  // from the base
  EXPECT_EQ(c->source, "row.conf");

  Result<PolcaConfig> again = ParseConfig(FormatConfig(*c), "again.conf");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(FormatConfig(*again).substr(FormatConfig(*again).find('\n')),
            FormatConfig(*c).substr(FormatConfig(*c).find('\n')));
}

TEST(PolcaConfig, ErrorsNameFileLineAndKey) {
  EXPECT_EQ(ParseConfig("policy.t1 = 0.8\npolicy.t3 = 1\n", "r.conf").error().message,
            "r.conf:2: key 'policy.t3': unknown key");
  EXPECT_EQ(ParseConfig("\n\ngpu.tdp_w = lots\n", "r.conf").error().message,
            "r.conf:3: key 'gpu.tdp_w': expected a decimal number (such as 0.8 or 6.5e3), got 'lots'");
  EXPECT_EQ(ParseConfig("service.max_batch = 3.5\n", "r.conf").error().message,
            "r.conf:1: key 'service.max_batch': expected an integer, got '3.5'");
  EXPECT_EQ(ParseConfig("just words\n", "r.conf").error().message,
            "r.conf:1: expected 'key = value', got 'just words'");
  EXPECT_EQ(ParseConfig("policy.t1 = \n", "r.conf").error().message, "r.conf:1: key 'policy.t1': missing value");
  EXPECT_EQ(ParseConfig("policy.t1 = 0.8\nbase = h100\n", "r.conf").error().message,
            "r.conf:2: key 'base': must come before every other setting");
  EXPECT_NE(ReadConfigFile("/nonexistent/x.conf").error().message.find("cannot open"), std::string::npos);
}

TEST(PolcaConfig, RejectsImpossibleThresholdsAndClocks) {
  EXPECT_EQ(ParseConfig("policy.t1 = 0.9\npolicy.t2 = 0.89\n", "r.conf").error().message,
            "r.conf: thresholds must satisfy 0 < policy.t1 < policy.t2 < policy.brake, got t1=0.9 t2=0.89 brake=1");
  EXPECT_NE(
      ParseConfig("policy.t2 = 0.89\npolicy.brake = 0.89\n", "r.conf").error().message.find("policy.t2 < policy.brake"),
      std::string::npos);
  EXPECT_NE(ParseConfig("policy.t1_release = 0.85\n", "r.conf").error().message.find("policy.t1_release"),
            std::string::npos);
  EXPECT_NE(ParseConfig("policy.t2_release = 0.9\n", "r.conf").error().message.find("policy.t2_release"),
            std::string::npos);
  EXPECT_EQ(ParseConfig("policy.t2_low_mhz = 2000\n", "r.conf").error().message,
            "r.conf: policy.t2_low_mhz = 2000 is outside the GPU's clock range [210, 1410] MHz");
  EXPECT_NE(ParseConfig("policy.t2_high_mhz = 1000\n", "r.conf").error().message.find("never slowed more"),
            std::string::npos);
  EXPECT_NE(ParseConfig("row.low_priority_share = 1.5\n", "r.conf").error().message.find("low_priority_share"),
            std::string::npos);
  EXPECT_NE(ParseConfig("gpu.idle_w = 500\n", "r.conf").error().message.find("idle_w < tdp_w"), std::string::npos);
  EXPECT_EQ(ParseConfig("policy.t2_training_w = 400\n", "r.conf").error().message,
            "r.conf: expected 0 < policy.t2_training_w <= policy.t1_training_w (W per GPU), got t1_training_w=350 "
            "t2_training_w=400");
  Result<PolcaConfig> training = ParseConfig("policy.t1_training_w = 280\npolicy.t2_training_w = 240\n", "r.conf");
  ASSERT_TRUE(training.ok()) << training.error().message;
  EXPECT_EQ(training->policy.t1_training_w, 280);
  EXPECT_EQ(training->policy.t2_training_w, 240);

  // The headroom policy's three parameters.
  EXPECT_EQ(ParseConfig("policy.headroom_guard = 1.2\n", "r.conf").error().message,
            "r.conf: policy.headroom_guard must be in (0, policy.brake], got 1.2");
  EXPECT_EQ(ParseConfig("policy.headroom_release = 0.97\n", "r.conf").error().message,
            "r.conf: policy.headroom_release must be in (0, policy.headroom_guard), got 0.97");
  // Its ladder's middle level: between t1 and t2 for low priority, never below low for high.
  EXPECT_EQ(ParseConfig("policy.headroom_mid_low_mhz = 1290\n", "r.conf").error().message,
            "r.conf: policy.headroom_mid_low_mhz must be in [policy.t2_low_mhz, policy.t1_low_mhz] = [1110, 1275] MHz "
            "(the headroom policy's ladder never loosens low priority on the way up), got 1290");
  EXPECT_EQ(ParseConfig("policy.headroom_mid_high_mhz = 1200\n", "r.conf").error().message,
            "r.conf: policy.headroom_mid_high_mhz must be >= policy.t2_high_mhz (1305) and >= "
            "policy.headroom_mid_low_mhz (1230): high priority is never slowed more than low, nor loosened on the "
            "way up; got 1200");
  EXPECT_EQ(ParseConfig("policy.headroom_mid_high_mhz = 1500\n", "r.conf").error().message,
            "r.conf: policy.headroom_mid_high_mhz = 1500 is outside the GPU's clock range [210, 1410] MHz");
  EXPECT_TRUE(ParseConfig("policy.headroom_mid_low_mhz = 1110\npolicy.headroom_mid_high_mhz = 1410\n", "r.conf").ok());
  EXPECT_EQ(ParseConfig("policy.headroom_window_s = 0.5\n", "r.conf").error().message,
            "r.conf: policy.headroom_window_s must be in [control.telemetry_period_s, 600] s, got 0.5");
  EXPECT_NE(ParseConfig("policy.headroom_window_s = 600\ncontrol.telemetry_period_s = 0.05\n", "r.conf")
                .error()
                .message.find("policy.headroom_window_s / control.telemetry_period_s must be at most 6000 readings"),
            std::string::npos);
  Result<PolcaConfig> headroom = ParseConfig(
      "policy.headroom_guard = 0.95\npolicy.headroom_release = 0.9\npolicy.headroom_window_s = 120\n", "r.conf");
  ASSERT_TRUE(headroom.ok()) << headroom.error().message;
  EXPECT_EQ(headroom->policy.headroom_window_s, 120);
  // The forecast's correction: a deadband in [0, 1] of the budget; 1 turns it off.
  EXPECT_EQ(ParseConfig("policy.headroom_correction_deadband = 1.5\n", "r.conf").error().message,
            "r.conf: policy.headroom_correction_deadband must be in [0, 1] (a fraction of the budget; 1 turns the "
            "forecast's correction off), got 1.5");
  EXPECT_FALSE(ParseConfig("policy.headroom_correction_deadband = -0.01\n", "r.conf").ok());
  Result<PolcaConfig> off = ParseConfig("policy.headroom_correction_deadband = 1\n", "r.conf");
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_EQ(off->policy.headroom_correction_deadband, 1);
  EXPECT_EQ(PolcaConfig{}.policy.headroom_correction_deadband, 0.02);
}

// strtod reads "0x10" as 16; a budget of 1e-300 W or 1e308 W is a mistake, not a row.
TEST(PolcaConfig, NumbersAreDecimalAndTheBudgetAndServerPowerAreInRange) {
  for (const char* bad : {"0x10", "1e", ".", "+", "1.2.3", "inf", "nan", "1e400"}) {
    auto refused = ParseConfig(std::string("row.budget_w = ") + bad + "\n", "r.conf");
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().message, std::string("r.conf:1: key 'row.budget_w': expected a decimal number (such as "
                                                   "0.8 or 6.5e3), got '") +
                                           bad + "'");
  }
  for (const char* good : {"5e4", "50000", "50000.", ".5e5", "+5.0E4"}) {
    EXPECT_TRUE(ParseConfig(std::string("row.budget_w = ") + good + "\n", "r.conf").ok()) << good;
  }
  EXPECT_NE(ParseConfig("row.budget_w = 1e-300\n", "r.conf").error().message.find("row.budget_w must be 0"),
            std::string::npos);
  EXPECT_NE(
      ParseConfig("row.budget_w = 1e308\n", "r.conf").error().message.find("between 1 W and 1000000000 W, got 1e+308"),
      std::string::npos)
      << ParseConfig("row.budget_w = 1e308\n", "r.conf").error().message;
  EXPECT_TRUE(ParseConfig("row.budget_w = 0\n", "r.conf").ok());
  EXPECT_NE(ParseConfig("row.provisioned_w_per_server = 2e6\n", "r.conf").error().message.find("no server draws"),
            std::string::npos);
}

TEST(PolcaConfig, AKeySetTwiceIsAnErrorNamingBothLines) {
  EXPECT_EQ(ParseConfig("policy.t1 = 0.8\n# comment\n\npolicy.t1 = 0.7\n", "r.conf").error().message,
            "r.conf:4: key 'policy.t1': set twice, on line 1 and on line 4");
  EXPECT_EQ(ParseConfig("base = h100\nbase = a100\n", "r.conf").error().message,
            "r.conf:2: key 'base': set twice, on line 1 and on line 2");
}

TEST(PolcaConfig, SkipsALeadingByteOrderMarkAndNeverEchoesControlBytes) {
  Result<PolcaConfig> bom = ParseConfig("\xEF\xBB\xBFpolicy.t1 = 0.7\npolicy.t1_release = 0.65\n", "r.conf");
  ASSERT_TRUE(bom.ok()) << bom.error().message;
  EXPECT_DOUBLE_EQ(bom->policy.t1, 0.7);
  EXPECT_EQ(ParseConfig("gpu.tdp_w = 4\x1b[2J00\n", "r.conf").error().message,
            "r.conf:1: key 'gpu.tdp_w': expected a decimal number (such as 0.8 or 6.5e3), got '4\\x1b[2J00'");
  EXPECT_EQ(ParseConfig("gpu.\x1b]0;x\x07 = 1\n", "r.conf").error().message,
            "r.conf:1: key 'gpu.\\x1b]0;x\\x07': unknown key");
  EXPECT_EQ(ParseConfig(std::string("\0\0\0", 3) + "\n", "r.conf").error().message,
            "r.conf:1: expected 'key = value', got '\\x00\\x00\\x00'");
  EXPECT_EQ(
      ParseConfig("base = " + std::string(500, 'x') + "\n", "r.conf").error().message,
      "r.conf:1: key 'base': unknown built-in config '" + std::string(80, 'x') + "...' (expected a100, h100, mi300x)");
}

TEST(PolcaConfig, ReadRefusesADirectoryAndAHugeFile) {
  const std::string dir = ::testing::TempDir() + "polca_config_test_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  EXPECT_EQ(ReadConfigFile(dir).error().message, dir + ": is a directory, expected a config file");
  const std::string huge = dir + "/huge.conf";
  std::ofstream(huge) << std::string((1 << 20) + 1, '#');
  EXPECT_EQ(ReadConfigFile(huge).error().message, huge + ": larger than 1048576 bytes; not a config file");
  const std::string ok = dir + "/ok.conf";
  std::ofstream(ok) << "policy.t2 = 0.9\n";
  ASSERT_TRUE(ReadConfigFile(ok).ok());
  EXPECT_DOUBLE_EQ(ReadConfigFile(ok)->policy.t2, 0.9);
  std::filesystem::remove_all(dir);
}

TEST(PolcaConfig, EnforcesTheRowLimits) {
  EXPECT_EQ(ParseConfig("row.baseline_servers = 10001\n", "r.conf").error().message,
            "r.conf: row.baseline_servers must be between 1 and 10000 servers (10,000 servers draw about 65 MW, a "
            "whole datacenter), got 10001");
  EXPECT_EQ(ParseConfig("service.max_batch = 1000000000\n", "r.conf").error().message,
            "r.conf: service.max_batch must be between 1 and 4096, got 1000000000");
  EXPECT_EQ(ParseConfig("service.max_prefill_tokens = 2000000\n", "r.conf").error().message,
            "r.conf: service.max_prefill_tokens must be between 1 and 1048576, got 2000000");
  EXPECT_EQ(ParseConfig("control.telemetry_period_s = 1e-9\n", "r.conf").error().message,
            "r.conf: control.telemetry_period_s must be between 0.01 s and 3600 s, got 1e-09");
  EXPECT_EQ(ParseConfig("workload.peak_requests_per_server_s = 1e12\n", "r.conf").error().message,
            "r.conf: workload.peak_requests_per_server_s must be positive and at most 1000, got 1e+12");
  EXPECT_TRUE(ParseConfig("row.baseline_servers = 10000\nservice.max_batch = 4096\n", "r.conf").ok());
}

// row.budget_w, when set, is the row's budget; unset (0) it is baseline_servers x provisioned_w_per_server.
TEST(PolcaConfigTest, RowBudgetComesFromBudgetWWhenSet) {
  auto unset = ParseConfig("row.baseline_servers = 10\nrow.provisioned_w_per_server = 5000\n", "r.conf");
  ASSERT_TRUE(unset.ok()) << unset.error().message;
  EXPECT_DOUBLE_EQ(unset->row_budget_w(), 50000);
  auto set = ParseConfig("row.baseline_servers = 10\nrow.budget_w = 42000\n", "r.conf");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_DOUBLE_EQ(set->row_budget_w(), 42000);
  auto back = ParseConfig(FormatConfig(*set), "back.conf");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_DOUBLE_EQ(back->row.budget_w, 42000);
  auto negative = ParseConfig("row.budget_w = -1\n", "r.conf");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.error().message.find(
                "row.budget_w must be 0 (baseline_servers x provisioned_w_per_server) or between 1 W"),
            std::string::npos)
      << negative.error().message;
}

}  // namespace
}  // namespace wattcut::polca
