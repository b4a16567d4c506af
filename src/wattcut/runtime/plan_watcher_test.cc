#include "wattcut/runtime/plan_watcher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <mutex>
#include <thread>

namespace wattcut {
namespace {

// A scripted server: each poll takes the next scripted answer; with none left it answers
// "unchanged" at the version the rank sent. Thread-safe (the thread tests call it from the watcher).
struct FakeServer {
  std::mutex mutex;
  std::deque<Result<DeploymentAnswer>> answers;
  std::deque<Status> registrations;  // answers to register_rank; none left: Ok
  std::deque<Result<std::string>> job_registrations;
  std::vector<std::tuple<std::string, uint64_t, uint64_t>> polls;  // (job id, step, version)
  std::vector<std::string> registered_jobs;                        // register_rank's job ids
  int job_registration_calls = 0;
  double poll_interval_s = 0.5;

  PlanWatcherServer Calls(bool registers_job = false) {
    PlanWatcherServer server;
    if (registers_job) {
      server.register_job = [this]() -> Result<std::string> {
        std::lock_guard lock(mutex);
        ++job_registration_calls;
        if (job_registrations.empty()) return std::string("job-7");
        auto answer = job_registrations.front();
        job_registrations.pop_front();
        return answer;
      };
    }
    server.register_rank = [this](const std::string& job_id) {
      std::lock_guard lock(mutex);
      registered_jobs.push_back(job_id);
      if (registrations.empty()) return Status::Ok();
      Status s = registrations.front();
      registrations.pop_front();
      return s;
    };
    server.fetch_deployment = [this](const std::string& job_id, uint64_t step,
                                     uint64_t version) -> Result<DeploymentAnswer> {
      std::lock_guard lock(mutex);
      polls.emplace_back(job_id, step, version);
      if (answers.empty()) return DeploymentAnswer{.version = version, .poll_interval_s = poll_interval_s};
      auto answer = answers.front();
      answers.pop_front();
      return answer;
    };
    return server;
  }
  void Change(uint64_t version, uint64_t apply_from_step, int freq_mhz = 1200, double interval_s = 0.5) {
    std::lock_guard lock(mutex);
    answers.push_back(
        DeploymentAnswer{.version = version,
                         .poll_interval_s = interval_s,
                         .change = RankDeployment{.version = version,
                                                  .apply_from_step = apply_from_step,
                                                  .mode = DeploymentMode::kPlan,
                                                  .plan_index = static_cast<int>(version),
                                                  .frequencies = {{"forward", freq_mhz}, {"backward", freq_mhz}}}});
  }
  void Fail(Error error, int times = 1) {
    std::lock_guard lock(mutex);
    for (int i = 0; i < times; ++i) answers.push_back(error);
  }
  size_t poll_count() {
    std::lock_guard lock(mutex);
    return polls.size();
  }
};

Error Down() {
  return Error::Unavailable("GET /v1/jobs/j/deployment: cannot reach the wattcut server at http://h:1: Connection");
}

// A manual clock, a fixed random draw (0.5: no jitter) and a log kept in memory.
struct Harness {
  double now_s = 100;
  double unit = 0.5;
  std::mutex log_mutex;
  std::vector<std::string> log;

  PlanWatcherOptions Options() {
    PlanWatcherOptions options;
    options.rank = 3;
    options.server_url = "http://h:1";
    options.now_s = [this] { return now_s; };
    options.random_unit = [this] { return unit; };
    options.log = [this](const std::string& line) {
      std::lock_guard lock(log_mutex);
      log.push_back(line);
    };
    return options;
  }
  std::vector<std::string> Log() {
    std::lock_guard lock(log_mutex);
    return log;
  }
  // One round, then the clock moves on by the wait it asked for.
  double Round(PlanWatcher& watcher) {
    const double wait_s = watcher.RunOnce();
    now_s += wait_s;
    return wait_s;
  }
};

TEST(PlanWatcher, HoldsEachNewVersionUntilItsApplyStep) {
  Harness h;
  FakeServer server;
  PlanWatcher watcher(h.Options(), server.Calls(), "j", /*rank_registered=*/true);
  EXPECT_TRUE(watcher.connected());

  EXPECT_EQ(h.Round(watcher), 0.5);  // unchanged at version 0
  EXPECT_FALSE(watcher.has_pending());
  EXPECT_FALSE(watcher.TakeDue(0).has_value());

  server.Change(1, 3, 1200);
  h.Round(watcher);
  EXPECT_TRUE(watcher.has_pending());
  EXPECT_EQ(watcher.received_version(), 1u);
  EXPECT_FALSE(watcher.TakeDue(2).has_value());  // not yet
  auto v1 = watcher.TakeDue(3);
  ASSERT_TRUE(v1.has_value());
  EXPECT_EQ(v1->version, 1u);
  EXPECT_EQ(v1->frequencies[0].freq_mhz, 1200);
  EXPECT_FALSE(watcher.has_pending());
  EXPECT_EQ(watcher.applied_version(), 1u);

  // Two changes arrive before either is due: each applies at its own step.
  watcher.SetStepsCompleted(4);
  server.Change(2, 6, 1100);
  h.Round(watcher);
  server.Change(3, 8, 1000);
  h.Round(watcher);
  EXPECT_FALSE(watcher.TakeDue(5).has_value());
  auto v2 = watcher.TakeDue(6);
  ASSERT_TRUE(v2.has_value());
  EXPECT_EQ(v2->version, 2u);
  EXPECT_TRUE(watcher.has_pending());
  EXPECT_FALSE(watcher.TakeDue(7).has_value());
  auto v3 = watcher.TakeDue(8);
  ASSERT_TRUE(v3.has_value());
  EXPECT_EQ(v3->version, 3u);

  // Two changes both due: the newer one wins, the older is dropped.
  server.Change(4, 9, 900);
  h.Round(watcher);
  server.Change(5, 9, 800);
  h.Round(watcher);
  auto v5 = watcher.TakeDue(9);
  ASSERT_TRUE(v5.has_value());
  EXPECT_EQ(v5->version, 5u);
  EXPECT_FALSE(watcher.has_pending());

  // Every poll sent the rank's step counter and the newest version it held.
  ASSERT_EQ(server.polls.size(), 6u);
  EXPECT_EQ(server.polls[0], std::make_tuple(std::string("j"), uint64_t{0}, uint64_t{0}));
  EXPECT_EQ(server.polls[2], std::make_tuple(std::string("j"), uint64_t{4}, uint64_t{1}));
  EXPECT_EQ(server.polls[3], std::make_tuple(std::string("j"), uint64_t{4}, uint64_t{2}));
  EXPECT_EQ(server.polls[5], std::make_tuple(std::string("j"), uint64_t{4}, uint64_t{4}));
  EXPECT_TRUE(h.Log().empty());  // nothing late, nothing failed
}

TEST(PlanWatcher, ALateDeploymentAppliesAtOnceWithOneWarning) {
  Harness h;
  FakeServer server;
  PlanWatcher watcher(h.Options(), server.Calls(), "j", true);
  server.Change(1, 2);
  h.Round(watcher);
  auto late = watcher.TakeDue(5);
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ(late->version, 1u);
  EXPECT_EQ(h.Log(),
            std::vector<std::string>{"rank 3: plan version 1 was due at step 2; applied at step 5 (3 steps late)"});

  // Due while the rank was still profiling (ready from step 9): applied at step 9, not late.
  server.Change(2, 4);
  h.Round(watcher);
  ASSERT_TRUE(watcher.TakeDue(9, /*ready_from_step=*/9).has_value());
  EXPECT_EQ(h.Log().size(), 1u);
  // A newer version than the server's is never expected; a lower one means it started over.
  server.Change(1, 10);
  h.Round(watcher);
  EXPECT_EQ(watcher.received_version(), 1u);
  ASSERT_TRUE(watcher.TakeDue(10).has_value());
}

TEST(PlanWatcher, AnOutageIsWarnedOnceAndItsEndSaidOnce) {
  Harness h;
  FakeServer server;
  PlanWatcher watcher(h.Options(), server.Calls(), "j", true);
  server.Change(1, 0);
  h.Round(watcher);
  ASSERT_TRUE(watcher.TakeDue(0).has_value());

  server.Fail(Down(), 5);
  for (int i = 0; i < 5; ++i) h.Round(watcher);
  EXPECT_FALSE(watcher.connected());
  EXPECT_EQ(watcher.outages(), 1u);
  EXPECT_EQ(watcher.missed_updates(), 5u);
  auto log = h.Log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0], "rank 3: deployment poll: " + Down().message +
                        "; training goes on with plan version 1; retrying every 0.5 s to 30 s");

  h.Round(watcher);  // answered again, after 0.5 + 1 + 2 + 4 + 8 s
  EXPECT_TRUE(watcher.connected());
  log = h.Log();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1], "rank 3: the wattcut server at http://h:1 is back after 15.5 s (5 missed updates)");
  h.Round(watcher);
  EXPECT_EQ(h.Log().size(), 2u);

  server.Fail(Error::Unavailable("HTTP 503: the server is shutting down"));
  h.Round(watcher);
  h.Round(watcher);
  EXPECT_EQ(watcher.outages(), 2u);
  EXPECT_EQ(watcher.missed_updates(), 6u);
  log = h.Log();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_NE(log[2].find("HTTP 503"), std::string::npos);
  EXPECT_EQ(log[3], "rank 3: the wattcut server at http://h:1 is back after 0.5 s (1 missed update)");
}

TEST(PlanWatcher, BacksOffFromHalfASecondToThirtySecondsAndStartsOverAfterAnAnswer) {
  Harness h;
  FakeServer server;
  PlanWatcher watcher(h.Options(), server.Calls(), "j", true);
  server.Fail(Down(), 9);
  std::vector<double> waits;
  for (int i = 0; i < 9; ++i) waits.push_back(h.Round(watcher));
  EXPECT_EQ(waits, (std::vector<double>{0.5, 1, 2, 4, 8, 16, 30, 30, 30}));
  server.poll_interval_s = 4;
  EXPECT_EQ(h.Round(watcher), 4);  // answered: the server's poll interval
  server.Fail(Down());
  EXPECT_EQ(h.Round(watcher), 0.5);  // a new outage starts over
  // Jitter: every wait is scaled by 1 +- 20 %.
  h.unit = 0;
  server.Fail(Down());
  EXPECT_DOUBLE_EQ(h.Round(watcher), 0.8);
  h.unit = 1;
  EXPECT_DOUBLE_EQ(h.Round(watcher), 4 * 1.2);
}

TEST(PlanWatcher, RetriesQueuedRequestsInOrderUntilAcknowledged) {
  Harness h;
  FakeServer server;
  PlanWatcher watcher(h.Options(), server.Calls(), "j", true);
  std::vector<std::string> sent;
  std::deque<Status> upload_answers = {Error::Unavailable("cannot reach"), Error::NotFound("HTTP 404: no job 'j'"),
                                       Error::Conflict("HTTP 409: not registered"), Status::Ok()};
  watcher.Enqueue({"rank profile upload", [&](const std::string& job_id) {
                     sent.push_back("upload to " + job_id);
                     Status s = upload_answers.front();
                     upload_answers.pop_front();
                     return s;
                   }});
  watcher.Enqueue({"straggler report (dp_rank 1: slowdown 1.5)", [&](const std::string&) {
                     sent.push_back("straggler");
                     return Status::Ok();
                   }});
  EXPECT_EQ(watcher.queued_requests(), 2u);

  // Each round polls first (the server learns the rank's step before a queued report), then
  // sends the queue.
  EXPECT_EQ(h.Round(watcher), 0.5);  // the upload: unreachable, an outage
  EXPECT_EQ(server.poll_count(), 1u);
  EXPECT_EQ(watcher.outages(), 1u);
  h.Round(watcher);  // 404: kept
  h.Round(watcher);  // 409: kept
  EXPECT_EQ(server.poll_count(), 3u);
  EXPECT_EQ(watcher.queued_requests(), 2u);
  h.Round(watcher);  // acknowledged, and the next one behind it too
  EXPECT_EQ(watcher.queued_requests(), 0u);
  EXPECT_EQ(sent, (std::vector<std::string>{"upload to j", "upload to j", "upload to j", "upload to j", "straggler"}));
  // One warning for the outage, its end, and one for the request the job could not take yet.
  auto log = h.Log();
  ASSERT_EQ(log.size(), 3u) << ::testing::PrintToString(log);
  EXPECT_NE(log[0].find("rank profile upload: cannot reach"), std::string::npos) << log[0];
  EXPECT_NE(log[1].find("is back after"), std::string::npos) << log[1];
  EXPECT_EQ(log[2], "rank 3: rank profile upload: HTTP 404: no job 'j'; retrying until the server acknowledges it");

  // Another 4xx is final: logged once, dropped, and the queue goes on.
  int refused_sends = 0;
  watcher.Enqueue({"straggler report (dp_rank 9: recovered)", [&](const std::string&) -> Status {
                     ++refused_sends;
                     return Error::InvalidArgument("HTTP 422: dp_rank 9 is out of range [0, 2)");
                   }});
  bool second_sent = false;
  watcher.Enqueue({"straggler report (dp_rank 0: recovered)", [&](const std::string&) {
                     second_sent = true;
                     return Status::Ok();
                   }});
  h.Round(watcher);
  h.Round(watcher);
  EXPECT_EQ(refused_sends, 1);
  EXPECT_TRUE(second_sent);
  EXPECT_EQ(watcher.queued_requests(), 0u);
  EXPECT_EQ(h.Log().back(),
            "rank 3: straggler report (dp_rank 9: recovered) refused, dropped: HTTP 422: dp_rank 9 is out of range [0, "
            "2)");
}

TEST(PlanWatcher, AJobTheServerForgotIsWarnedOnceAndThePlanKept) {
  Harness h;
  FakeServer server;
  PlanWatcher watcher(h.Options(), server.Calls(), "j", true);
  server.Change(2, 0);
  h.Round(watcher);
  ASSERT_TRUE(watcher.TakeDue(0).has_value());
  server.Fail(Error::NotFound("GET /v1/jobs/j/deployment: HTTP 404: no job 'j'"), 4);
  std::vector<double> waits;
  for (int i = 0; i < 4; ++i) waits.push_back(h.Round(watcher));
  EXPECT_EQ(waits, (std::vector<double>{0.5, 1, 2, 4}));
  EXPECT_TRUE(watcher.connected());  // the server answers
  EXPECT_EQ(watcher.outages(), 0u);
  EXPECT_EQ(watcher.missed_updates(), 4u);
  EXPECT_EQ(watcher.applied_version(), 2u);
  EXPECT_EQ(h.Log(), std::vector<std::string>{"rank 3: deployment poll: GET /v1/jobs/j/deployment: HTTP 404: no job "
                                              "'j'; keeping plan version 2 and asking again"});
  h.Round(watcher);  // known again
  server.Fail(Error::NotFound("HTTP 404: no job 'j'"));
  h.Round(watcher);
  EXPECT_EQ(h.Log().size(), 2u);  // a new episode, a new warning
}

TEST(PlanWatcher, ARankTheServerDoesNotKnowRegistersAgain) {
  Harness h;
  FakeServer server;
  PlanWatcher watcher(h.Options(), server.Calls(), "j", true);
  server.Fail(Error::Conflict("HTTP 409: job 'j': rank 3 has not registered"));
  h.Round(watcher);
  EXPECT_FALSE(watcher.rank_registered());
  EXPECT_TRUE(server.registered_jobs.empty());
  server.registrations.push_back(Error::Conflict("HTTP 409: rank 3 is already registered"));
  h.Round(watcher);  // re-registers (a 409 there: an earlier try got through), then polls
  EXPECT_EQ(server.registered_jobs, std::vector<std::string>{"j"});
  EXPECT_TRUE(watcher.rank_registered());
  EXPECT_EQ(server.poll_count(), 2u);
  EXPECT_TRUE(h.Log().empty());
}

TEST(PlanWatcher, RegistersInTheBackgroundWhenTheServerIsDownAtStart) {
  Harness h;
  FakeServer server;
  PlanWatcher watcher(h.Options(), server.Calls(/*registers_job=*/true), "", /*rank_registered=*/false);
  EXPECT_FALSE(watcher.connected());
  server.job_registrations.push_back(Error::Unavailable("POST /register_job: cannot reach the wattcut server"));
  server.job_registrations.push_back(Error::Unavailable("POST /register_job: cannot reach the wattcut server"));
  Status start = watcher.RegisterNow();
  ASSERT_FALSE(start.ok());
  EXPECT_EQ(FailureKindOf(start.error()), FailureKind::kUnreachable);
  EXPECT_EQ(watcher.retry_delay_s(), 0.5);
  EXPECT_EQ(watcher.job_id(), "");
  h.now_s += watcher.retry_delay_s();
  EXPECT_EQ(h.Round(watcher), 1.0);  // still down
  h.Round(watcher);                  // up: the job, then the rank, then the first poll
  EXPECT_EQ(watcher.job_id(), "job-7");
  EXPECT_EQ(server.job_registration_calls, 3);
  EXPECT_EQ(server.registered_jobs, std::vector<std::string>{"job-7"});
  ASSERT_EQ(server.poll_count(), 1u);
  EXPECT_EQ(std::get<0>(server.polls[0]), "job-7");
  EXPECT_TRUE(watcher.connected());
  auto log = h.Log();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0],
            "rank 3: job registration: POST /register_job: cannot reach the wattcut server; training goes on with "
            "every instruction at the highest clock; retrying every 0.5 s to 30 s");
  EXPECT_EQ(log[1], "rank 3: the wattcut server at http://h:1 is back after 1.5 s (2 missed updates)");

  // At start any other refusal is the caller's to report, and not counted or logged here.
  FakeServer refusing;
  refusing.registrations.push_back(Error::NotFound("POST /register_rank/x: HTTP 404: no job 'x'"));
  Harness h2;
  PlanWatcher unknown(h2.Options(), refusing.Calls(), "x", false);
  Status refused = unknown.RegisterNow();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(h2.Log().empty());
  EXPECT_EQ(unknown.missed_updates(), 0u);
}

TEST(PlanWatcher, WaitsForAJobIdThatAnotherRankRegisters) {
  Harness h;
  FakeServer server;
  PlanWatcher watcher(h.Options(), server.Calls(), "", false);
  EXPECT_EQ(h.Round(watcher), 30);  // nothing to ask without a job id
  EXPECT_TRUE(server.registered_jobs.empty());
  EXPECT_EQ(server.poll_count(), 0u);
  EXPECT_TRUE(watcher.SetJobId("job-9"));
  EXPECT_FALSE(watcher.SetJobId("job-10"));
  EXPECT_TRUE(watcher.SetJobId("job-9"));
  h.Round(watcher);
  EXPECT_EQ(server.registered_jobs, std::vector<std::string>{"job-9"});
  EXPECT_EQ(server.poll_count(), 1u);
}

// Waits (bounded in count, never asserted on time) until `done` holds.
template <typename Done>
bool Eventually(Done done) {
  for (int i = 0; i < 20000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

TEST(PlanWatcher, StopEndsABackoffWaitAndSaysWhatWasNotDelivered) {
  Harness h;
  FakeServer server;
  PlanWatcherOptions options = h.Options();
  options.now_s = {};  // the thread's own clock
  options.min_backoff_s = 1000;
  options.max_backoff_s = 1000;
  for (int i = 0; i < 100; ++i) server.Fail(Down());
  PlanWatcher watcher(options, server.Calls(), "j", true);
  watcher.Start(0);
  ASSERT_TRUE(Eventually([&] { return watcher.outages() >= 1; }));
  watcher.Enqueue({"straggler report (dp_rank 0: slowdown 2)", [](const std::string&) { return Status::Ok(); }});
  watcher.Stop();  // returns although the backoff has ~1000 s to go
  EXPECT_EQ(server.poll_count(), 1u);
  EXPECT_EQ(watcher.missed_updates(), 1u);
  auto log = h.Log();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1], "rank 3: stopped before the server acknowledged: straggler report (dp_rank 0: slowdown 2)");
  watcher.Stop();  // idempotent
}

TEST(PlanWatcher, AQueuedRequestWakesTheThreadOutOfAPollWait) {
  Harness h;
  FakeServer server;
  server.poll_interval_s = 1000;
  PlanWatcherOptions options = h.Options();
  options.now_s = {};
  PlanWatcher watcher(options, server.Calls(), "j", true);
  watcher.Start(0);
  ASSERT_TRUE(Eventually([&] { return server.poll_count() >= 1; }));
  std::atomic<bool> sent{false};
  watcher.Enqueue({"rank profile upload", [&](const std::string&) {
                     sent = true;
                     return Status::Ok();
                   }});
  EXPECT_TRUE(Eventually([&] { return sent.load() && watcher.queued_requests() == 0; }));
  watcher.Stop();
  EXPECT_TRUE(h.Log().empty());
}

TEST(PlanWatcher, ClassifiesFailuresByCode) {
  EXPECT_EQ(FailureKindOf(Error::Unavailable("x")), FailureKind::kUnreachable);
  EXPECT_EQ(FailureKindOf(Error::DeadlineExceeded("x")), FailureKind::kUnreachable);
  EXPECT_EQ(FailureKindOf(Error::NotFound("x")), FailureKind::kJobMissing);
  EXPECT_EQ(FailureKindOf(Error::Conflict("x")), FailureKind::kConflict);
  EXPECT_EQ(FailureKindOf(Error::InvalidArgument("x")), FailureKind::kRefused);
  EXPECT_EQ(FailureKindOf(Error::Malformed("x")), FailureKind::kRefused);
  EXPECT_EQ(FailureKindOf(Error::Aborted("x")), FailureKind::kRefused);
}

}  // namespace
}  // namespace wattcut
