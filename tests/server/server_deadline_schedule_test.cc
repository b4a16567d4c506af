// Deadline schedules (PUT/GET/DELETE /v1/jobs/{id}/deadline_schedule) on the real `wattcut
// serve` (issue 32): a schedule of 2-second intervals switches every rank's plan, from one apply
// step, as its intervals pass; it survives a SIGKILL and a restart; a job whose ranks report
// progress behind it is replanned; bad requests get clear errors.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/planned_job.h"
#include "tests/server/server_process.h"

namespace wattcut::testing {
namespace {

using nlohmann::json;

constexpr double kIntervalS = 2.0;

double UnixNowMs() {
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return std::floor(now * 1000) / 1000;
}

void SleepUntil(double unix_s) {
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (unix_s > now) std::this_thread::sleep_for(std::chrono::duration<double>(unix_s - now));
}

// GET of the job's deadline schedule once no computation of it is in flight (a replan, or after a
// restart: they run in the background); bounded, 6,000 naps of 10 ms.
json DeadlineWhenComputed(httplib::Client& c, const std::string& path) {
  json got;
  for (int naps = 0; naps < 6000; ++naps) {
    got = Get(c, "/v1/jobs/" + path + "/deadline_schedule").body;
    if (!got.is_object() || !got["following"].value("computing", false)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return got;
}

// Cheap, dear, cheap: 2 s each from `start` (seconds since 1970); the last price holds on.
std::string Prices(double start) {
  char text[256];
  std::snprintf(text, sizeof(text), "time,price\n%.3f,0.10\n%.3f,0.30\n%.3f,0.10\n", start, start + kIntervalS,
                start + 2 * kIntervalS);
  return text;
}

// ISO 8601 for seconds since 1970, to the millisecond.
std::string Iso(double unix_s) {
  const auto whole = static_cast<std::time_t>(std::floor(unix_s));
  std::tm utc{};
  gmtime_r(&whole, &utc);
  char text[40];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  char out[64];
  std::snprintf(out, sizeof(out), "%s.%03dZ", text, static_cast<int>(std::lround((unix_s - whole) * 1000)) % 1000);
  return out;
}

// The schedule's body: `horizon_s` from `start`, iterations `share` of the way from what the
// slowest plan does to what the fastest does.
json Spec(httplib::Client& c, const std::string& path, double start, double horizon_s, double share, double margin) {
  json points = Get(c, "/v1/jobs/" + path + "/frontier/points?limit=10000").body["points"];
  const double slow = horizon_s / points.front()["time_s"].get<double>();
  const double fast = horizon_s / points.back()["time_s"].get<double>();
  return {{"iterations", std::round(slow + share * (fast - slow))},
          {"start", Iso(start)},
          {"deadline", Iso(start + horizon_s)},
          {"price_csv", Prices(start)},
          {"replan_margin", margin}};
}

// Every rank runs one plan from one apply step; that plan.
int CommonPlan(const std::vector<json>& deployments) {
  std::set<int> plans;
  std::set<int64_t> steps;
  for (const json& d : deployments) {
    EXPECT_EQ(d["mode"], "plan") << d.dump();
    plans.insert(d.value("plan_index", -1));
    steps.insert(d.value("apply_from_step", int64_t{-1}));
  }
  EXPECT_EQ(plans.size(), 1u) << "the ranks run different plans";
  EXPECT_EQ(steps.size(), 1u) << "the ranks were given different apply steps";
  return *plans.begin();
}

TEST(ServerDeadlineSchedule, EveryRankFollowsTheScheduleAndARestartAfterSigkillKeepsIt) {
  ScopedTempDir dir("deadline_schedule");
  auto server = std::make_unique<ServerProcess>(std::vector<std::string>{}, dir.path());
  ASSERT_TRUE(server->running()) << server->startup_output();
  auto c = server->Client();
  const std::string path = RegisterPlannedJob(*c);
  const double start = UnixNowMs() + 1;
  auto set = Put(*c, "/v1/jobs/" + path + "/deadline_schedule", Spec(*c, path, start, 7 * kIntervalS, 0.5, 1.0));
  ASSERT_EQ(set.status, 200) << set.text;
  const json& intervals = set.body["schedule"]["intervals"];
  ASSERT_EQ(intervals.size(), 3u) << set.text;  // the last holds to the deadline, 14 s from the start
  const int dear = intervals[1]["plans"][0]["point"].get<int>();
  const int cheap = intervals[0]["plans"].back()["point"].get<int>();
  EXPECT_LT(dear, cheap) << "the dear interval runs a slower plan";

  std::vector<int> seen;
  for (int k = 0; k < 3; ++k) {
    SleepUntil(start + (k + 0.5) * kIntervalS);
    const std::vector<json> now = FetchAll(*c, path, 0, 0);
    const int plan = CommonPlan(now);
    EXPECT_EQ(plan, Get(*c, "/v1/jobs/" + path + "/deadline_schedule").body["following"]["point_now"]) << k;
    seen.push_back(plan);
  }
  EXPECT_EQ(seen[1], dear);
  EXPECT_NE(seen[0], seen[1]);
  // The status page shows the schedule, the point now and the progress against it.
  const std::string page = Get(*c, "/").text;
  EXPECT_NE(page.find("deadline schedule"), std::string::npos);
  EXPECT_NE(page.find("point " + std::to_string(seen[2]) + " now; "), std::string::npos) << page;
  EXPECT_NE(page.find(" so far as planned; finish "), std::string::npos);

  // SIGKILL and a restart on the same folder: the same spec and schedule, and the ranks get the
  // point of the moment (the last interval's, which holds on).
  const json before = Get(*c, "/v1/jobs/" + path + "/deadline_schedule").body;
  server->Kill();
  server = std::make_unique<ServerProcess>(std::vector<std::string>{}, dir.path());
  ASSERT_TRUE(server->running()) << server->startup_output();
  c = server->Client();
  ASSERT_EQ(WaitForFrontier(*c, path).value("state", ""), "ready");
  const json after = DeadlineWhenComputed(*c, path);
  EXPECT_EQ(after["spec"], before["spec"]);
  EXPECT_EQ(after["schedule"]["intervals"], before["schedule"]["intervals"]);
  EXPECT_EQ(CommonPlan(FetchAll(*c, path, 0, 0)), seen[2]);

  // Cleared: the selected (fastest) plan again.
  auto cleared = Delete(*c, "/v1/jobs/" + path + "/deadline_schedule");
  ASSERT_EQ(cleared.status, 200) << cleared.text;
  json points = Get(*c, "/v1/jobs/" + path + "/frontier/points?limit=10000").body["points"];
  EXPECT_EQ(CommonPlan(FetchAll(*c, path, 0, 0)), static_cast<int>(points.size()) - 1);
  EXPECT_EQ(Get(*c, "/v1/jobs/" + path + "/deadline_schedule").status, 404);
}

TEST(ServerDeadlineSchedule, RanksBehindTheScheduleGetTheRestPlannedAgain) {
  ScopedTempDir dir("deadline_replan");
  ServerProcess server(std::vector<std::string>{}, dir.path());
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  const std::string path = RegisterPlannedJob(*c);
  const double start = UnixNowMs();
  // A minute at the slowest plan's pace: behind it after 3 s with one step done, and room left to
  // catch up at faster plans.
  const json spec = Spec(*c, path, start, 60, 0.0, 0.02);
  ASSERT_EQ(Put(*c, "/v1/jobs/" + path + "/deadline_schedule", spec).status, 200);
  FetchAll(*c, path, 0, 0);
  SleepUntil(start + 3);
  FetchAll(*c, path, 1, 0);  // one step done where the schedule expected about four
  const json got = DeadlineWhenComputed(*c, path);
  EXPECT_EQ(got["following"]["replans"], 1) << got.dump();
  EXPECT_EQ(got["spec"]["from_step"], 1);
  EXPECT_EQ(got["spec"]["iterations"].get<double>(), spec["iterations"].get<double>() - 1);
  EXPECT_FALSE(got["following"].contains("error")) << got.dump();
}

TEST(ServerDeadlineSchedule, BadRequestsSayWhatIsWrong) {
  ScopedTempDir dir("deadline_bad");
  ServerProcess server(std::vector<std::string>{}, dir.path());
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  const std::string path = RegisterPlannedJob(*c);
  const double now = UnixNowMs();
  const std::string deadline = Iso(now + 60);
  struct Bad {
    HttpReply reply;
    int status;
    const char* says;
  };
  const Bad bad[] = {
      {Put(*c, "/v1/jobs/" + path + "/deadline_schedule", json::object()), 422, "field 'iterations' is required"},
      {Put(*c, "/v1/jobs/" + path + "/deadline_schedule", {{"iterations", 10}, {"deadline", "soon"}}), 422,
       "field 'deadline': expected an ISO 8601 UTC time"},
      {Put(*c, "/v1/jobs/" + path + "/deadline_schedule",
           {{"iterations", 10}, {"deadline", deadline}, {"price_csv", "time,price\n100,0.1\n100,0.2\n"}}),
       422, "deadline_schedule.price_csv:3: column 'time': times must increase"},
      {Put(*c, "/v1/jobs/" + path + "/deadline_schedule", {{"iterations", 1e9}, {"deadline", deadline}}), 422,
       "cannot be met"},
      {Put(*c, "/v1/jobs/no-such-job/deadline_schedule", {{"iterations", 10}, {"deadline", deadline}}), 404,
       "unknown job"},
  };
  for (const Bad& b : bad) {
    EXPECT_EQ(b.reply.status, b.status) << b.reply.text;
    EXPECT_NE(b.reply.text.find(b.says), std::string::npos) << b.reply.text;
  }
  EXPECT_EQ(Get(*c, "/v1/jobs/" + path + "/deadline_schedule").status, 404);
}

}  // namespace
}  // namespace wattcut::testing
