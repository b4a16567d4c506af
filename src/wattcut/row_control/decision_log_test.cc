#include "wattcut/row_control/decision_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace wattcut::row_control {
namespace {

TEST(DecisionLog, ALineHoldsTheReadingTheStateTheCommandsAndTheSends) {
  Decision d;
  d.now_s = 12;
  d.row_power_w = 3400;
  d.fraction = 0.85;
  d.measured_at_s = 12;
  d.level = polca::PolicyLevel::kT1;
  d.stale_servers = {"s3"};
  polca::ControlCommand low;
  low.target = polca::ControlCommand::Target::kLowPriority;
  low.issued_at_s = 12;
  low.effective_at_s = 52;
  low.setting.lock_mhz = 1275;
  d.commands = {low};
  d.sent = {{1, 1275, 30, "polca level=t1 brake=off"}, {0, std::nullopt, 30, ""}};
  auto doc = nlohmann::json::parse(DecisionLogLine(d, {"s0", "s1"}));
  EXPECT_EQ(doc["state"], "t1");
  EXPECT_EQ(doc["fraction"], 0.85);
  EXPECT_EQ(doc["stale_servers"], nlohmann::json({"s3"}));
  EXPECT_EQ(doc["commands"][0],
            nlohmann::json({{"target", "low"}, {"lock_mhz", 1275.0}, {"issued_at_s", 12.0}, {"effective_at_s", 52.0}}));
  EXPECT_EQ(doc["sent"], nlohmann::json::parse(R"([{"server":"s1","mhz":1275},{"server":"s0","mhz":null}])"));
  EXPECT_EQ(doc["mode"], "enforce");
  d.shadow = true;
  EXPECT_TRUE(nlohmann::json::parse(DecisionLogLine(d, {"s0", "s1"})).contains("would_send"));
}

TEST(DecisionLog, TheFileIsAppendedLineByLineAndAnUnwritableOneIsAnError) {
  const std::string dir = std::filesystem::temp_directory_path() / ("wattcut-decisions-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    auto log = DecisionLogFile::Open(dir + "/d.jsonl");
    ASSERT_TRUE(log.ok());
    EXPECT_TRUE((*log)->Write("{\"a\":1}"));
    EXPECT_TRUE((*log)->Write("{\"a\":2}"));
  }
  std::ifstream in(dir + "/d.jsonl");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{\"a\":1}\n{\"a\":2}\n");
  auto bad = DecisionLogFile::Open(dir + "/missing/d.jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("--log"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wattcut::row_control
