#include "wattcut/agent/server_power.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

namespace wattcut::agent {
namespace {

using ::testing::HasSubstr;

// ---- the non-GPU model ----

TEST(NonGpuPowerModel, ParsesEveryForm) {
  struct Case {
    const char* text;
    double fixed_w;
    double gpu_factor;
  };
  const Case cases[] = {
      {"1700+0.15*gpu", 1700, 0.15},
      {"1700", 1700, 0},
      {"0.15*gpu", 0, 0.15},
      {"0.15*gpu+1700", 1700, 0.15},
      {" 1700 + 0.15 * gpu ", 1700, 0.15},
      {"\t250.5\t", 250.5, 0},
      {"0", 0, 0},
      {".5*gpu", 0, 0.5},
      {"1000000+100*gpu", 1e6, 100},
  };
  for (const Case& c : cases) {
    auto model = NonGpuPowerModel::Parse(c.text);
    ASSERT_TRUE(model.ok()) << c.text << ": " << model.error().message;
    EXPECT_EQ(model->fixed_w(), c.fixed_w) << c.text;
    EXPECT_EQ(model->gpu_factor(), c.gpu_factor) << c.text;
  }
}

TEST(NonGpuPowerModel, NonGpuPowerIsTheFixedPartPlusTheFactorTimesTheGpus) {
  auto model = NonGpuPowerModel::Parse("1700+0.15*gpu");
  ASSERT_TRUE(model.ok());
  EXPECT_DOUBLE_EQ(model->NonGpuW(0), 1700);
  EXPECT_DOUBLE_EQ(model->NonGpuW(4000), 1700 + 600);
  EXPECT_DOUBLE_EQ(NonGpuPowerModel().NonGpuW(4000), 0);
}

TEST(NonGpuPowerModel, ToStringReadsBack) {
  for (const char* text : {"1700+0.15*gpu", "1700", "0.15*gpu", "0", "212.25+1.5*gpu", "1000000+0.0000001*gpu"}) {
    auto model = NonGpuPowerModel::Parse(text);
    ASSERT_TRUE(model.ok()) << text;
    EXPECT_EQ(model->ToString(), text);
    auto again = NonGpuPowerModel::Parse(model->ToString());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->fixed_w(), model->fixed_w());
    EXPECT_EQ(again->gpu_factor(), model->gpu_factor());
  }
}

TEST(NonGpuPowerModel, ErrorsSayWhatWasExpectedWhere) {
  struct Case {
    const char* text;
    const char* expected;
  };
  const Case cases[] = {
      {"", "is empty"},
      {"   ", "is empty"},
      {"1700+0.15*cpu", "expected 'gpu' after '*' at character 11"},
      {"1700+", "expected a number at character 6"},
      {"+1700", "expected a number at character 1"},
      {"-100", "expected a number at character 1"},
      {"gpu", "expected a number at character 1"},
      {"gpu*0.15", "expected a number at character 1"},
      {"1700 0.15*gpu", "unexpected text at character 6"},
      {"1700+0.15*gpu+5", "unexpected text at character 14"},
      {"1e3", "unexpected text at character 2"},
      {"1700+1700", "two fixed terms"},
      {"0.1*gpu+0.2*gpu", "two B*gpu terms"},
      {"2000000", "2000000 W is above 1000000 W"},
      {"101*gpu", "the factor 101 of gpu is above 100"},
      {"nan", "expected a number at character 1"},
      {"1700\x1b[2J", "\"1700\\x1b[2J\": unexpected text at character 5"},
  };
  for (const Case& c : cases) {
    auto model = NonGpuPowerModel::Parse(c.text);
    ASSERT_FALSE(model.ok()) << c.text;
    EXPECT_THAT(model.error().message, HasSubstr(c.expected)) << c.text;
    EXPECT_THAT(model.error().message, HasSubstr("the form is A+B*gpu")) << c.text;
  }
}

// ---- the Redfish Power resource ----

// A Chassis Power resource as BMCs answer it (DMTF Power.v1_x schema; trimmed).
std::string RedfishPowerDocument(const std::string& consumed_watts) {
  return R"({
  "@odata.context": "/redfish/v1/$metadata#Power.Power",
  "@odata.id": "/redfish/v1/Chassis/1/Power",
  "@odata.type": "#Power.v1_7_1.Power",
  "Id": "Power",
  "Name": "Power",
  "PowerControl": [
    {
      "@odata.id": "/redfish/v1/Chassis/1/Power#/PowerControl/0",
      "MemberId": "0",
      "Name": "System Power Control",
      "PowerConsumedWatts": )" +
         consumed_watts + R"(,
      "PowerCapacityWatts": 6000,
      "PowerMetrics": {"IntervalInMin": 1, "MinConsumedWatts": 1100, "MaxConsumedWatts": 1400,
                       "AverageConsumedWatts": 1250},
      "PowerLimit": {"LimitInWatts": null, "LimitException": "NoAction"},
      "RelatedItem": [{"@odata.id": "/redfish/v1/Chassis/1"}],
      "Status": {"State": "Enabled", "Health": "OK"}
    }
  ],
  "PowerControl@odata.count": 1,
  "PowerSupplies": [
    {"@odata.id": "/redfish/v1/Chassis/1/Power#/PowerSupplies/0", "MemberId": "0", "Name": "PSU1",
     "PowerCapacityWatts": 3000, "LastPowerOutputWatts": 610, "Status": {"State": "Enabled", "Health": "OK"}}
  ],
  "Voltages": []
})";
}

TEST(RedfishPower, ReadsPowerConsumedWattsOfTheFirstPowerControl) {
  auto watts = ParseRedfishPower(RedfishPowerDocument("1234.5"));
  ASSERT_TRUE(watts.ok()) << watts.error().message;
  EXPECT_EQ(*watts, 1234.5);
  EXPECT_EQ(*ParseRedfishPower(RedfishPowerDocument("1812")), 1812);
  EXPECT_EQ(*ParseRedfishPower(R"({"PowerControl":[{"PowerConsumedWatts":0},{"PowerConsumedWatts":9}]})"), 0);
}

TEST(RedfishPower, ErrorsNameWhatIsMissing) {
  struct Case {
    std::string body;
    std::string expected;
  };
  const Case cases[] = {
      {"", "not JSON"},
      {"<html>login</html>", "not JSON"},
      {"[1]", "not a JSON object; not a Redfish Power resource"},
      {R"({"@odata.type":"#Chassis.v1_14_0.Chassis","Id":"1"})", "has no member 'PowerControl'; not a Redfish Power"},
      {R"({"PowerControl":{}})", "'PowerControl' is not an array"},
      {R"({"PowerControl":[]})", "'PowerControl' is empty"},
      {R"({"PowerControl":[7]})", "PowerControl[0] is not an object"},
      {R"({"PowerControl":[{"Name":"x"}]})", "has no member PowerControl[0].PowerConsumedWatts"},
      {RedfishPowerDocument("null"), "PowerControl[0].PowerConsumedWatts is null: the BMC has no reading"},
      {RedfishPowerDocument("\"1234\""), "PowerConsumedWatts is a string, expected a number of watts"},
      {RedfishPowerDocument("-5"), "PowerConsumedWatts is -5, expected a non-negative number"},
  };
  for (const Case& c : cases) {
    auto watts = ParseRedfishPower(c.body);
    ASSERT_FALSE(watts.ok()) << c.body;
    EXPECT_THAT(watts.error().message, HasSubstr(c.expected)) << c.body;
  }
  EXPECT_EQ(ParseRedfishPower("{").error().code, ErrorCode::kMalformed);
}

// ---- the combination ----

TEST(ServerPower, TheModelWithoutRedfish) {
  auto model = NonGpuPowerModel::Parse("1700+0.15*gpu");
  ASSERT_TRUE(model.ok());
  ServerPowerReading r = CombineServerPower(4000, *model, std::nullopt, 5);
  EXPECT_EQ(r.source, "model");
  EXPECT_DOUBLE_EQ(r.gpu_power_w, 4000);
  EXPECT_DOUBLE_EQ(r.non_gpu_power_w, 2300);
  EXPECT_DOUBLE_EQ(r.power_w, 6300);
  EXPECT_FALSE(r.redfish_age_s.has_value());
  EXPECT_TRUE(ToJson(r)["redfish_age_s"].is_null());
  EXPECT_EQ(ToJson(r)["source"], "model");
  EXPECT_EQ(ToJson(r)["power_w"], 6300.0);
}

TEST(ServerPower, ARecentRedfishReadingWins) {
  NonGpuPowerModel model(1700, 0.15);
  ServerPowerReading r = CombineServerPower(4000, model, RedfishSample{5800, 2.0}, 5);
  EXPECT_EQ(r.source, "redfish");
  EXPECT_DOUBLE_EQ(r.power_w, 5800);
  EXPECT_DOUBLE_EQ(r.gpu_power_w, 4000);
  EXPECT_DOUBLE_EQ(r.non_gpu_power_w, 1800);
  EXPECT_EQ(r.redfish_age_s, 2.0);
  EXPECT_EQ(ToJson(r)["redfish_age_s"], 2.0);
  // A BMC average behind a GPU reading does not make the rest of the server negative.
  ServerPowerReading behind = CombineServerPower(4000, model, RedfishSample{3900, 0}, 5);
  EXPECT_DOUBLE_EQ(behind.power_w, 3900);
  EXPECT_DOUBLE_EQ(behind.non_gpu_power_w, 0);
}

TEST(ServerPower, ARedfishReadingOlderThanThreePeriodsIsStale) {
  EXPECT_FALSE(IsStaleRedfishReading(15, 5));
  EXPECT_TRUE(IsStaleRedfishReading(15.001, 5));
  NonGpuPowerModel model(1700, 0.15);
  EXPECT_EQ(CombineServerPower(4000, model, RedfishSample{5800, 15}, 5).source, "redfish");
  ServerPowerReading stale = CombineServerPower(4000, model, RedfishSample{5800, 15.5}, 5);
  EXPECT_EQ(stale.source, "model");
  EXPECT_DOUBLE_EQ(stale.power_w, 6300);
  EXPECT_EQ(stale.redfish_age_s, 15.5);  // still shown: it says why the model is used
}

// ---- the reader, against a small Redfish-shaped server on 127.0.0.1 ----

// GET /redfish/v1/Chassis/1/Power with HTTP basic auth root:"calvin pass", answering what the test
// sets: a Power resource with the given watts, or an HTTP error.
class FakeRedfish {
 public:
  FakeRedfish() {
    server_.Get("/redfish/v1/Chassis/1/Power", [this](const httplib::Request& req, httplib::Response& res) {
      ++requests_;
      if (req.get_header_value("Authorization") != "Basic cm9vdDpjYWx2aW4gcGFzcw==") {
        res.status = 401;
        res.set_content(R"({"error":{"code":"Base.1.8.GeneralError","message":"unauthorized"}})", "application/json");
        return;
      }
      std::unique_lock lock(mu_);
      // A BMC that accepted the connection and hangs: no answer until released (bounded).
      hang_cv_.wait_for(lock, std::chrono::seconds(10), [this] { return !hang_; });
      res.status = status_;
      res.set_content(status_ == 200 ? RedfishPowerDocument(watts_) : "{}", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeRedfish() {
    Hang(false);
    Stop();
  }

  void Answer(const std::string& watts, int status = 200) {
    std::lock_guard lock(mu_);
    watts_ = watts;
    status_ = status;
  }
  void Hang(bool hang) {
    {
      std::lock_guard lock(mu_);
      hang_ = hang;
    }
    hang_cv_.notify_all();
  }
  void Stop() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/redfish/v1/Chassis/1/Power"; }
  int requests() const { return requests_.load(); }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> requests_{0};
  std::mutex mu_;
  std::condition_variable hang_cv_;
  bool hang_ = false;
  std::string watts_ = "1234.5";
  int status_ = 200;
};

// Waits until `condition` holds, checking every 10 ms; false if it did not within 30 s (a bound
// against a hang, not a timing claim).
bool Eventually(const std::function<bool()>& condition) {
  for (int i = 0; i < 3000; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

class RedfishReader : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("wattcut_redfish_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string AuthFile(const std::string& text, mode_t mode = 0600) {
    std::string path = (dir_ / "redfish.auth").string();
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(RedfishReader, FollowsTheBmcAndFallsBackToTheModelWhenItStopsAnswering) {
  FakeRedfish bmc;
  RedfishSettings settings{bmc.url(), AuthFile("root:calvin pass\n"), true, 0.05};
  auto reader = RedfishPowerReader::Start(settings);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  RedfishPowerReader* r = reader->get();
  ServerPowerMeter meter(NonGpuPowerModel(1700, 0.15), std::move(*reader));

  ASSERT_TRUE(Eventually([&] { return r->Last().has_value(); })) << r->LastError();
  EXPECT_EQ(r->Last()->power_w, 1234.5);
  EXPECT_EQ(r->LastError(), "");
  ServerPowerReading reading = meter.Read(800);
  EXPECT_EQ(reading.source, "redfish");
  EXPECT_DOUBLE_EQ(reading.power_w, 1234.5);
  EXPECT_DOUBLE_EQ(reading.non_gpu_power_w, 434.5);
  ASSERT_TRUE(reading.redfish_age_s.has_value());
  EXPECT_GE(*reading.redfish_age_s, 0);

  bmc.Answer("1300");
  ASSERT_TRUE(Eventually([&] { return r->Last() && r->Last()->power_w == 1300; }));

  // The BMC answers, but with an error: the last reading is kept until it is stale.
  bmc.Answer("1300", 503);
  ASSERT_TRUE(Eventually([&] { return r->LastError().find("HTTP 503") != std::string::npos; })) << r->LastError();
  ASSERT_TRUE(r->Last().has_value());
  EXPECT_EQ(r->Last()->power_w, 1300);
  ASSERT_TRUE(Eventually([&] { return meter.Read(800).source == "model"; }));
  ServerPowerReading stale = meter.Read(800);
  EXPECT_EQ(stale.source, "model");
  EXPECT_DOUBLE_EQ(stale.power_w, 800 + 1700 + 0.15 * 800);
  ASSERT_TRUE(stale.redfish_age_s.has_value());
  EXPECT_GT(*stale.redfish_age_s, 3 * 0.05);
  EXPECT_GE(meter.stale_redfish_readings(), 2u);
  EXPECT_GE(r->failed_polls(), 1u);

  // Back again.
  bmc.Answer("1400");
  ASSERT_TRUE(Eventually([&] { return meter.Read(800).source == "redfish"; }));
  EXPECT_EQ(r->Last()->power_w, 1400);
  EXPECT_EQ(r->LastError(), "");

  // The BMC hangs: each poll times out after a period, and the reading goes stale.
  bmc.Hang(true);
  ASSERT_TRUE(Eventually([&] { return meter.Read(800).source == "model"; }));
  ASSERT_TRUE(Eventually([&] { return !r->LastError().empty(); }));
  bmc.Hang(false);
  ASSERT_TRUE(Eventually([&] { return meter.Read(800).source == "redfish"; }));

  // The BMC is gone: nothing listens any more.
  bmc.Stop();
  ASSERT_TRUE(Eventually([&] { return !r->LastError().empty(); }));
  ASSERT_TRUE(Eventually([&] { return meter.Read(800).source == "model"; }));
  EXPECT_EQ(r->Last()->power_w, 1400);
}

TEST_F(RedfishReader, AWrongPasswordIsAnErrorAndTheModelIsUsed) {
  FakeRedfish bmc;
  auto reader = RedfishPowerReader::Start({bmc.url(), AuthFile("root:wrong\n"), true, 0.05});
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  RedfishPowerReader* r = reader->get();
  ServerPowerMeter meter(NonGpuPowerModel(1700, 0), std::move(*reader));
  ASSERT_TRUE(Eventually([&] { return !r->LastError().empty(); }));
  EXPECT_THAT(r->LastError(), HasSubstr("HTTP 401 from " + bmc.url() + ": check --redfish-auth-file"));
  EXPECT_FALSE(r->Last().has_value());
  ServerPowerReading reading = meter.Read(500);
  EXPECT_EQ(reading.source, "model");
  EXPECT_DOUBLE_EQ(reading.power_w, 2200);
  EXPECT_FALSE(reading.redfish_age_s.has_value());
  EXPECT_EQ(meter.stale_redfish_readings(), 1u);
}

TEST_F(RedfishReader, NoAuthFileSendsNoCredentials) {
  FakeRedfish bmc;
  auto reader = RedfishPowerReader::Start({bmc.url(), "", true, 0.05});
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  ASSERT_TRUE(Eventually([&] { return !(*reader)->LastError().empty(); }));
  EXPECT_THAT((*reader)->LastError(), HasSubstr("HTTP 401"));
}

TEST_F(RedfishReader, StopsPollingWhenDestroyed) {
  FakeRedfish bmc;
  {
    auto reader = RedfishPowerReader::Start({bmc.url(), AuthFile("root:calvin pass"), true, 0.02});
    ASSERT_TRUE(reader.ok()) << reader.error().message;
    ASSERT_TRUE(Eventually([&] { return (*reader)->polls() >= 3; }));
  }
  // A request that timed out on the client's side may still reach the server late; let those
  // arrive, then no more may come.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int after = bmc.requests();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(bmc.requests(), after);
}

TEST_F(RedfishReader, RefusesBadSettingsBeforeStarting) {
  struct Case {
    RedfishSettings settings;
    std::string expected;
  };
  const Case cases[] = {
      {{"ftp://bmc/redfish/v1/Chassis/1/Power", "", true, 5}, "expected http(s)://HOST[:PORT]/PATH"},
      {{"bmc/redfish", "", true, 5}, "expected http(s)://HOST[:PORT]/PATH"},
      {{"https:///redfish/v1", "", true, 5}, "has no host"},
      {{"https://bmc/a b", "", true, 5}, "holds a blank"},
      {{"https://bmc/redfish/v1/Chassis/1/Power", "", true, 0}, "Redfish period 0 s is out of range"},
      {{"https://bmc/redfish/v1/Chassis/1/Power", "", true, 7200}, "out of range; expected 0.01 to 3600 s"},
      {{"https://bmc/redfish/v1/Chassis/1/Power", (dir_ / "missing").string(), true, 5},
       "cannot open Redfish auth file"},
  };
  for (const Case& c : cases) {
    auto reader = RedfishPowerReader::Start(c.settings);
    ASSERT_FALSE(reader.ok()) << c.settings.url;
    EXPECT_THAT(reader.error().message, HasSubstr(c.expected)) << c.settings.url;
  }
}

TEST_F(RedfishReader, TheAuthFileIsOneUserPasswordLineOnlyItsOwnerCanRead) {
  auto ok = ReadRedfishAuthFile(AuthFile("root:calvin pass\r\n"));
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(*ok, "root:calvin pass");
  EXPECT_EQ(*ReadRedfishAuthFile(AuthFile("root:")), "root:");

  auto shared = ReadRedfishAuthFile(AuthFile("root:calvin\n", 0644));
  ASSERT_FALSE(shared.ok());
  EXPECT_THAT(shared.error().message, HasSubstr("accessible by group or others (mode 0644)"));
  EXPECT_THAT(shared.error().message, HasSubstr("chmod 600 "));
  for (const char* bad : {"root\n", ":calvin\n", "", "root:calvin\nother:line\n"}) {
    auto r = ReadRedfishAuthFile(AuthFile(bad));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r.error().message, HasSubstr("expected one 'user:password' line")) << bad;
  }
  EXPECT_THAT(ReadRedfishAuthFile(AuthFile("root:a\x1b"
                                           "b"))
                  .error()
                  .message,
              HasSubstr("holds a control byte"));
}

}  // namespace
}  // namespace wattcut::agent
