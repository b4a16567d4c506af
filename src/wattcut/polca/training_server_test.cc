#include "wattcut/polca/training_server.h"

#include <gtest/gtest.h>

#include "wattcut/polca/training_job.h"

namespace wattcut::polca {
namespace {

// 1 s at 1,000 W, then 2 s at 2,000 W: a 3-s iteration.
TrainingTimeline TwoSteps() { return {"A", 0, {1, 3}, {1000, 2000}, 250}; }
// 2 s at 500 W, then 4 s at 800 W: a 6-s iteration (a slower lock).
TrainingTimeline Slow() { return {"lock", 1000, {2, 6}, {500, 800}, 100}; }

TEST(TrainingServer, FollowsItsTimelineIterationAfterIteration) {
  TrainingTimeline a = TwoSteps();
  TrainingServer s(&a, 0);
  EXPECT_EQ(s.power_w(), 1000);
  EXPECT_EQ(s.next_event_s(), 1);
  s.HandleEvent(1);
  EXPECT_EQ(s.power_w(), 2000);
  EXPECT_EQ(s.next_event_s(), 3);
  s.HandleEvent(3);  // the iteration ends, the next starts
  EXPECT_EQ(s.power_w(), 1000);
  EXPECT_EQ(s.next_event_s(), 4);
  EXPECT_DOUBLE_EQ(s.IterationsDone(4.5), 1.5);
  EXPECT_DOUBLE_EQ(a.average_server_w(), (1000 * 1 + 2000 * 2) / 3.0);
}

TEST(TrainingServer, StartsAtItsPhase) {
  TrainingTimeline a = TwoSteps();
  TrainingServer s(&a, 0.5);  // 1.5 s into the iteration: in the second step
  EXPECT_EQ(s.power_w(), 2000);
  EXPECT_DOUBLE_EQ(s.next_event_s(), 1.5);
  EXPECT_DOUBLE_EQ(s.IterationsDone(0), 0);
  s.HandleEvent(1.5);
  EXPECT_DOUBLE_EQ(s.IterationsDone(1.5), 0.5);
  EXPECT_DOUBLE_EQ(s.IterationsDone(3), 1.0);
}

TEST(TrainingServer, APlanChangesAtTheNextIterationBoundary) {
  TrainingTimeline a = TwoSteps();
  TrainingTimeline b{"B", 0, {4}, {700}, 90};
  TrainingServer s(&a, 0);
  s.HandleEvent(1);
  s.SetPlan(&b);  // at t = 2, in A's second step
  EXPECT_EQ(s.power_w(), 2000);
  EXPECT_EQ(s.next_event_s(), 3);
  EXPECT_EQ(s.running_plan(), &a);
  s.HandleEvent(3);  // the boundary: B from here on
  EXPECT_EQ(s.running_plan(), &b);
  EXPECT_EQ(s.power_w(), 700);
  EXPECT_EQ(s.next_event_s(), 7);
  EXPECT_DOUBLE_EQ(s.IterationsDone(5), 1.5);
}

TEST(TrainingServer, APlanCanWaitForALaterBoundary) {
  TrainingTimeline a = TwoSteps();
  TrainingTimeline b{"B", 0, {4}, {700}, 90};
  TrainingServer s(&a, 0);
  s.SetPlan(&b, 2);  // the apply step: the boundary after the next
  EXPECT_EQ(s.plan(), &b);
  s.HandleEvent(1);
  s.HandleEvent(3);
  EXPECT_EQ(s.running_plan(), &a);
  s.HandleEvent(4);
  s.HandleEvent(6);
  EXPECT_EQ(s.running_plan(), &b);
  EXPECT_EQ(s.next_event_s(), 10);
  // Back to the running plan before its apply step: nothing pending any more.
  s.SetPlan(&a, 2);
  s.SetPlan(&b, 2);
  EXPECT_EQ(s.plan(), &b);
  s.HandleEvent(10);
  EXPECT_EQ(s.running_plan(), &b);
}

TEST(TrainingServer, AClockLimitActsAtOnceKeepingTheFractionDone) {
  TrainingTimeline a = TwoSteps();
  TrainingTimeline lock = Slow();
  TrainingServer s(&a, 0);
  s.HandleEvent(1);
  // At t = 1.5 half of A's iteration is done: 3 s into the 6-s lock, its second step.
  s.SetClockLimit(&lock, 1.5);
  EXPECT_EQ(s.power_w(), 800);
  EXPECT_DOUBLE_EQ(s.next_event_s(), 4.5);
  EXPECT_DOUBLE_EQ(s.IterationsDone(1.5), 0.5);
  EXPECT_DOUBLE_EQ(s.IterationsDone(3), 0.75);
  // Lifted at t = 3 (three quarters done): back on A, 2.25 s into it.
  s.SetClockLimit(nullptr, 3);
  EXPECT_EQ(s.power_w(), 2000);
  EXPECT_DOUBLE_EQ(s.next_event_s(), 3.75);
  EXPECT_DOUBLE_EQ(s.IterationsDone(3.75), 1.0);
  // The brake (a clock limit) over a pending plan change: the plan still waits for the boundary.
  TrainingTimeline b{"B", 0, {4}, {700}, 90};
  s.HandleEvent(3.75);
  s.SetPlan(&b);
  s.SetClockLimit(&lock, 4.5);  // a quarter into the iteration: 1.5 s into the lock, first step
  EXPECT_EQ(s.power_w(), 500);
  EXPECT_DOUBLE_EQ(s.next_event_s(), 5);
  s.HandleEvent(5);
  s.HandleEvent(9);  // the lock's iteration ends: B is the plan, the lock still limits
  EXPECT_EQ(s.running_plan(), &b);
  EXPECT_EQ(s.power_w(), 500);
  s.SetClockLimit(nullptr, 9);
  EXPECT_EQ(s.power_w(), 700);
  EXPECT_DOUBLE_EQ(s.IterationsDone(9), 2.0);
}

TEST(TrainingServer, TimelinesAreChecked) {
  EXPECT_TRUE(ValidateTimeline(TwoSteps()).ok());
  EXPECT_FALSE(ValidateTimeline({"x", 0, {}, {}, 0}).ok());
  EXPECT_FALSE(ValidateTimeline({"x", 0, {1, 1}, {1, 1}, 0}).ok());
  EXPECT_FALSE(ValidateTimeline({"x", 0, {1}, {-1}, 0}).ok());
  EXPECT_EQ(ParseTrainingControl("power-target").value(), TrainingControl::kPowerTarget);
  EXPECT_EQ(TrainingControlName(TrainingControl::kLocks), "locks");
  EXPECT_NE(ParseTrainingControl("caps").error().message.find("expected locks or power-target"), std::string::npos);
}

TEST(ServerTimeline, AveragesThePipelineOverStepsAndAddsTheRestOfTheServer) {
  // 4 stages, 2 GPUs each: pipeline GPU power 100 W for 0.1 s, 200 W for 0.5 s, 50 W for 0.4 s.
  PowerTimeline pipeline{{0, 0.1, 0.6, 1.0}, {100, 200, 50}};
  ServerSpec server;
  server.gpus = 8;
  server.other_idle_w = 1700;
  server.other_w_per_gpu_w = 0.15;
  TrainingTimeline t = ServerTimeline("p", pipeline, 600, 4, 2, server, 0.25);
  ASSERT_EQ(t.step_end_s.size(), 4u);
  EXPECT_DOUBLE_EQ(t.step_end_s[0], 0.25);
  EXPECT_DOUBLE_EQ(t.iteration_s(), 1.0);
  auto server_w = [](double pipeline_w) { return 1700 + pipeline_w * 2 * 1.15; };
  EXPECT_NEAR(t.server_w[0], server_w((0.1 * 100 + 0.15 * 200) / 0.25), 1e-9);
  EXPECT_NEAR(t.server_w[1], server_w(200), 1e-9);
  EXPECT_NEAR(t.server_w[2], server_w((0.1 * 200 + 0.15 * 50) / 0.25), 1e-9);
  EXPECT_NEAR(t.server_w[3], server_w(50), 1e-9);
  EXPECT_DOUBLE_EQ(t.peak_power_per_gpu_w, 150);  // 600 W over the pipeline's 4 GPUs
  // Energy is kept: the average is the pipeline's average.
  EXPECT_NEAR(t.average_server_w(), server_w(0.1 * 100 + 0.5 * 200 + 0.4 * 50), 1e-9);
  // A step longer than the iteration: one step.
  EXPECT_EQ(ServerTimeline("p", pipeline, 600, 4, 2, server, 5).step_end_s.size(), 1u);
}

TrainingJob HandJob() {
  TrainingJob job;
  job.all_max = {"AllMax", 1410, {10}, {5000}, 400};
  job.locks = {{"900 MHz", 900, {20}, {3000}, 200},
               {"1100 MHz", 1100, {15}, {3800}, 280},
               {"1300 MHz", 1300, {11}, {4600}, 360},
               {"1410 MHz", 1410, {10}, {5000}, 400}};
  job.plans = {{"plan 9", 0, {10}, {4400}, 340}, {"plan 5", 0, {11}, {4000}, 290}, {"plan 0", 0, {14}, {3500}, 230}};
  return job;
}

TEST(TrainingJob, APowerTargetGivesTheFastestPlanAtOrBelowIt) {
  TrainingJob job = HandJob();
  bool met = false;
  EXPECT_EQ(job.PlanFor(350, &met).name, "plan 9");
  EXPECT_TRUE(met);
  EXPECT_EQ(job.PlanFor(300, &met).name, "plan 5");
  EXPECT_EQ(job.PlanFor(290, &met).name, "plan 5");
  EXPECT_EQ(job.PlanFor(200, &met).name, "plan 0");  // none that low: the lowest peak
  EXPECT_FALSE(met);
}

TEST(TrainingJob, ALockRunsTheLargestSweptClockAtOrBelowIt) {
  TrainingJob job = HandJob();
  EXPECT_EQ(job.LockFor(1410, 0), nullptr);  // at the highest clock: unlocked, AllMax
  EXPECT_EQ(job.LockFor(1300, 0)->name, "1300 MHz");
  EXPECT_EQ(job.LockFor(1275, 0)->name, "1100 MHz");
  EXPECT_EQ(job.LockFor(288, 0)->name, "900 MHz");  // below every clock: the lowest
  EXPECT_EQ(job.Brake().name, "900 MHz");
  // A cap: the highest clock whose peak per GPU fits under it.
  EXPECT_EQ(job.LockFor(1410, 300)->name, "1100 MHz");
  EXPECT_EQ(job.LockFor(1410, 100)->name, "900 MHz");
  EXPECT_EQ(job.LockFor(1000, 350)->name, "900 MHz");
}

}  // namespace
}  // namespace wattcut::polca
