// The registry's deadline schedules (PUT/DELETE/GET /v1/jobs/{id}/deadline_schedule) over a real
// JobStore, without a server process: every rank switches point at the schedule's boundaries, a
// job behind its schedule is replanned, a power target below the schedule's point still wins, a
// restart keeps the schedule, and bad requests are refused naming the field and line.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "wattcut/base/iso_time.h"
#include "wattcut/server/job_registry.h"
#include "wattcut/server/registry_harness_testing.h"
#include "wattcut/server/registry_testing.h"

namespace wattcut::server {
namespace {

using nlohmann::json;
using testing::kTwoPipelineJobStages;
using testing::PlanIndexOf;
using testing::RegisterJobOfTwoPipelines;
using testing::RegistryHarness;
using testing::TempDir;

constexpr double kIntervalS = 2.0;

double UnixNow() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// Now, to the millisecond the price series are written with.
double UnixNowMs() { return std::floor(UnixNow() * 1000) / 1000; }

void SleepUntil(double unix_s) {
  const double wait = unix_s - UnixNow();
  if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
}

// A job of two pipelines (RegisterJobOfTwoPipelines) with the small profile uploaded and its
// frontier ready. Its id.
std::string RegisterJobOfTwoPipelinesWithFrontier(RegistryHarness& r) {
  std::string id = RegisterJobOfTwoPipelines(r);
  ProfileUpload upload;
  upload.csv = testing::SmallProfileCsv(kTwoPipelineJobStages);
  r.Ok(r.registry->UploadProfile(id, upload));
  EXPECT_EQ(r.FrontierWhenDone(id)["state"], "ready");
  return id;
}

struct Times {
  double slowest_s, fastest_s;
  size_t points;
};
Times FrontierTimes(RegistryHarness& r, const std::string& id) {
  json points = r.Ok(r.registry->FrontierPoints(id, 0, 10000))["points"];
  return {points.front()["time_s"].get<double>(), points.back()["time_s"].get<double>(), points.size()};
}

// Three intervals of 2 s from `start`: cheap, dear, cheap (seconds since 1970).
std::string Prices(double start) {
  char text[256];
  std::snprintf(text, sizeof(text), "time,price\n%.3f,0.10\n%.3f,0.30\n%.3f,0.10\n", start, start + kIntervalS,
                start + 2 * kIntervalS);
  return text;
}

// A schedule from `start` to `start + horizon_s` over the three intervals' prices (the last one
// holds on), with iterations `share` of the way from what the slowest plan does to what the
// fastest does.
DeadlineScheduleSpec Spec(const Times& t, double start, double margin, double share = 0.5,
                          double horizon_s = 3 * kIntervalS) {
  DeadlineScheduleSpec spec;
  const double horizon = horizon_s;
  spec.iterations = std::round(horizon / t.slowest_s + share * (horizon / t.fastest_s - horizon / t.slowest_s));
  spec.start = FormatTimestamp(start);
  spec.deadline = FormatTimestamp(start + horizon);
  spec.price_csv = Prices(start);
  spec.replan_margin = margin;
  return spec;
}

// GET of the schedule once no computation of it is in flight (bounded: 60,000 naps of 1 ms):
// replans and schedules computed again after a restart run on the registry's deadline worker.
json DeadlineWhenComputed(RegistryHarness& r, const std::string& id) {
  json got;
  for (int naps = 0; naps < 60000; ++naps) {
    got = r.Ok(r.registry->GetDeadlineSchedule(id));
    if (!got["following"].value("computing", false)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return got;
}

// A gate for JobRegistry::Options::deadline_checkpoint: while closed, every deadline computation
// that reaches a checkpoint waits there; `arrivals` counts the computations that have waited.
class ComputationGate {
 public:
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = false;
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void Checkpoint() {
    std::unique_lock<std::mutex> lock(mu_);
    if (open_) return;
    ++arrivals_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return open_; });
  }
  // Waits until `n` computations have stopped at the gate (bounded: 60 s, then false).
  bool WaitForArrivals(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(60), [&] { return arrivals_ >= n; });
  }
  // The registry's options with every deadline computation stopping at this gate.
  JobRegistry::Options Options() {
    JobRegistry::Options options;
    options.deadline_checkpoint = [this] { Checkpoint(); };
    return options;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int arrivals_ = 0;
};

TEST(JobRegistryDeadline, EveryRankSwitchesPointAtTheSchedulesBoundaries) {
  TempDir temp("deadline_boundaries");
  RegistryHarness r(temp.path());
  const std::string id = RegisterJobOfTwoPipelinesWithFrontier(r);
  const Times t = FrontierTimes(r, id);
  ASSERT_GE(t.points, 4u);
  const double start = std::ceil(UnixNow()) + 1;
  json set = r.Ok(r.registry->SetDeadlineSchedule(id, Spec(t, start, 1.0)));
  ASSERT_EQ(set["schedule"]["intervals"].size(), 3u) << set.dump();
  // The dear interval runs a slower point than the cheap ones around it.
  const json& k = set["schedule"]["intervals"];
  const int cheap = k[0]["plans"].back()["point"].get<int>(), dear = k[1]["plans"].front()["point"].get<int>();
  EXPECT_LT(dear, cheap);
  for (int interval = 0; interval < 3; ++interval) {
    SleepUntil(start + (interval + 0.5) * kIntervalS);
    const json now = r.Ok(r.registry->GetDeadlineSchedule(id));
    const int point = now["following"]["point_now"].get<int>();
    for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(PlanIndexOf(r, id, rank), point) << "interval " << interval;
    if (interval == 1) {
      EXPECT_EQ(point, dear);
    }
  }
  EXPECT_EQ(r.Ok(r.registry->GetDeadlineSchedule(id))["following"]["replans"], 0);
}

TEST(JobRegistryDeadline, AJobBehindItsScheduleIsReplannedFromItsProgress) {
  TempDir temp("deadline_replan");
  RegistryHarness r(temp.path());
  const std::string id = RegisterJobOfTwoPipelinesWithFrontier(r);
  const Times t = FrontierTimes(r, id);
  const double start = UnixNowMs();
  // 30 s, a quarter of the way from the slowest plans to the fastest: room to catch up.
  const DeadlineScheduleSpec spec = Spec(t, start, 0.05, 0.25, 30);
  r.Ok(r.registry->SetDeadlineSchedule(id, spec));
  for (int rank = 0; rank < 4; ++rank) PlanIndexOf(r, id, rank, 0);
  EXPECT_EQ(r.Ok(r.registry->GetDeadlineSchedule(id))["following"]["replans"], 0);
  // 3 s later the schedule expected over a tenth of the iterations; the ranks report 1 step.
  SleepUntil(start + 3);
  for (int rank = 0; rank < 4; ++rank) PlanIndexOf(r, id, rank, 1);
  const json after = DeadlineWhenComputed(r, id);
  EXPECT_EQ(after["following"]["replans"], 1) << after.dump();
  EXPECT_EQ(after["spec"]["from_step"], 1);
  EXPECT_DOUBLE_EQ(after["spec"]["iterations"].get<double>(), spec.iterations - 1);
  EXPECT_EQ(after["spec"]["deadline"], spec.deadline);
  EXPECT_GT(after["spec"]["start"].get<std::string>(), spec.start);
  // The rest in less time: the schedule's total is the remaining iterations.
  EXPECT_NEAR(after["schedule"]["totals"]["iterations"].get<double>(), spec.iterations - 1, 1e-6);
}

TEST(JobRegistryDeadline, APowerTargetBelowTheSchedulesPointStillWins) {
  TempDir temp("deadline_power_target");
  RegistryHarness r(temp.path());
  const std::string id = RegisterJobOfTwoPipelinesWithFrontier(r);
  const Times t = FrontierTimes(r, id);
  const double start = UnixNowMs();
  r.Ok(r.registry->SetDeadlineSchedule(id, Spec(t, start, 1.0)));
  const int scheduled = PlanIndexOf(r, id, 0);
  ASSERT_GT(scheduled, 0);
  json points = r.Ok(r.registry->FrontierPoints(id, 0, 10000))["points"];
  PowerTarget target;
  target.kind = PowerTarget::Kind::kAverage;
  target.per_gpu_w = points[0]["avg_power_per_gpu_w"].get<double>();  // the slowest plan's
  r.Ok(r.registry->SetPowerTarget(id, target));
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(PlanIndexOf(r, id, rank), 0);
  r.Ok(r.registry->ClearPowerTarget(id));
  EXPECT_EQ(PlanIndexOf(r, id, 0), scheduled);
  // Without the schedule, the job's selection (the fastest plan) again.
  r.Ok(r.registry->ClearDeadlineSchedule(id));
  EXPECT_EQ(PlanIndexOf(r, id, 0), static_cast<int>(t.points) - 1);
  EXPECT_EQ(r.registry->GetDeadlineSchedule(id).error().code, ErrorCode::kNotFound);
}

TEST(JobRegistryDeadline, BadRequestsAreRefusedNamingTheFieldAndLine) {
  TempDir temp("deadline_bad");
  RegistryHarness r(temp.path());
  std::string early = RegisterJobOfTwoPipelines(r);
  DeadlineScheduleSpec spec;
  spec.iterations = 100;
  spec.deadline = FormatTimestamp(UnixNow() + 60);
  Answer no_frontier = r.registry->SetDeadlineSchedule(early, spec);
  ASSERT_FALSE(no_frontier.ok());
  EXPECT_EQ(no_frontier.error().code, ErrorCode::kConflict);
  EXPECT_NE(no_frontier.error().message.find("frontier is not ready"), std::string::npos);

  const std::string id = RegisterJobOfTwoPipelinesWithFrontier(r);
  const double now = UnixNow();
  spec.price_csv = "time,price\n" + std::to_string(now - 10) + ",0.1\n" + std::to_string(now - 20) + ",0.2\n";
  Answer unsorted = r.registry->SetDeadlineSchedule(id, spec);
  ASSERT_FALSE(unsorted.ok());
  EXPECT_EQ(unsorted.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(unsorted.error().message.find("deadline_schedule.price_csv:3: column 'time': times must increase"),
            std::string::npos)
      << unsorted.error().message;
  spec.price_csv.clear();
  spec.iterations = 1e9;
  Answer late = r.registry->SetDeadlineSchedule(id, spec);
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.error().message.find("cannot be met"), std::string::npos) << late.error().message;
  EXPECT_EQ(r.registry->GetDeadlineSchedule(id).error().code, ErrorCode::kNotFound);
}

// A PUT computes its schedule without the job's lock: while it is held at a checkpoint, a rank's
// deployment poll and a GET are answered (the GET says "computing"), and a newer PUT supersedes
// it: the first answers kConflict and changes nothing, the second's schedule is the job's.
TEST(JobRegistryDeadline, APutComputesWithoutTheJobsLockAndANewerPutSupersedesIt) {
  TempDir temp("deadline_off_lock");
  ComputationGate gate;
  RegistryHarness r(temp.path(), gate.Options());
  const std::string id = RegisterJobOfTwoPipelinesWithFrontier(r);
  const Times t = FrontierTimes(r, id);
  const double start = UnixNowMs() + 30;
  r.Ok(r.registry->SetDeadlineSchedule(id, Spec(t, start, 1.0)));
  const uint64_t version = r.Ok(r.registry->FetchDeployment(id, 0, 0, 0))["version"].get<uint64_t>();

  gate.Close();
  Answer first = Error{"not answered"}, second = Error{"not answered"};
  std::thread a([&] { first = r.registry->SetDeadlineSchedule(id, Spec(t, start, 1.0, 0.2)); });
  ASSERT_TRUE(gate.WaitForArrivals(1));
  // The job's lock is free: a poll is answered with the deployment it had, and a GET too.
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(r.Ok(r.registry->FetchDeployment(id, rank, 0, version))["version"].get<uint64_t>(), version);
  }
  EXPECT_TRUE(r.Ok(r.registry->GetDeadlineSchedule(id))["following"]["computing"].get<bool>());
  std::thread b([&] { second = r.registry->SetDeadlineSchedule(id, Spec(t, start, 1.0, 0.8)); });
  ASSERT_TRUE(gate.WaitForArrivals(2));
  gate.Open();
  a.join();
  b.join();
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().code, ErrorCode::kConflict);
  EXPECT_NE(first.error().message.find("changed nothing"), std::string::npos) << first.error().message;
  ASSERT_TRUE(second.ok()) << second.error().message;
  const json now = r.Ok(r.registry->GetDeadlineSchedule(id));
  EXPECT_EQ(now["spec"]["iterations"], Spec(t, start, 1.0, 0.8).iterations);
  EXPECT_FALSE(now["following"]["computing"].get<bool>());
}

// The server stopping cancels a PUT's computation: it answers kUnavailable, and nothing changed.
TEST(JobRegistryDeadline, StoppingTheServerCancelsAComputation) {
  TempDir temp("deadline_stop");
  ComputationGate gate;
  RegistryHarness r(temp.path(), gate.Options());
  const std::string id = RegisterJobOfTwoPipelinesWithFrontier(r);
  const Times t = FrontierTimes(r, id);
  gate.Close();
  Answer put = Error{"not answered"};
  std::thread a([&] { put = r.registry->SetDeadlineSchedule(id, Spec(t, UnixNowMs() + 30, 1.0)); });
  ASSERT_TRUE(gate.WaitForArrivals(1));
  r.registry->Shutdown();
  gate.Open();
  a.join();
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.error().code, ErrorCode::kUnavailable) << put.error().message;
  EXPECT_EQ(r.registry->GetDeadlineSchedule(id).error().code, ErrorCode::kNotFound);
}

// A restart keeps the schedule: the registry loads without computing stored schedules, which are
// computed in the background. Meanwhile a rank that has the stored version keeps it, one that asks
// for the deployment is told to keep its plan and ask again (kUnavailable), and then the same spec
// and schedule are back, and every rank is given what it had, under the same version.
TEST(JobRegistryDeadline, ARestartLoadsFirstAndComputesStoredSchedulesAfter) {
  TempDir temp("deadline_restart_background");
  std::string id;
  json before;
  uint64_t version = 0;
  const double start = UnixNowMs() + 30;
  {
    RegistryHarness r(temp.path());
    id = RegisterJobOfTwoPipelinesWithFrontier(r);
    const Times t = FrontierTimes(r, id);
    r.Ok(r.registry->SetDeadlineSchedule(id, Spec(t, start, 1.0)));
    before = r.Ok(r.registry->GetDeadlineSchedule(id));
    version = r.Ok(r.registry->FetchDeployment(id, 0, 0, 0))["version"].get<uint64_t>();
  }
  ComputationGate gate;
  gate.Close();
  RegistryHarness r(temp.path(), gate.Options());  // Load returned while the computation waits at the gate
  ASSERT_TRUE(gate.WaitForArrivals(1));
  EXPECT_TRUE(r.Ok(r.registry->GetDeadlineSchedule(id))["following"]["computing"].get<bool>());
  EXPECT_EQ(r.Ok(r.registry->FetchDeployment(id, 0, 0, version))["version"].get<uint64_t>(), version);
  Answer fresh = r.registry->FetchDeployment(id, 1, 0, 0);
  ASSERT_FALSE(fresh.ok());
  EXPECT_EQ(fresh.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(fresh.error().message.find("keep the current plan"), std::string::npos) << fresh.error().message;
  gate.Open();
  const json after = DeadlineWhenComputed(r, id);
  EXPECT_EQ(after["spec"], before["spec"]);
  EXPECT_EQ(after["schedule"]["intervals"], before["schedule"]["intervals"]);
  const json d = r.Ok(r.registry->FetchDeployment(id, 1, 0, 0));
  EXPECT_EQ(d["version"].get<uint64_t>(), version);
  EXPECT_EQ(d["plan_index"], before["following"]["point_now"]);
}

}  // namespace
}  // namespace wattcut::server
