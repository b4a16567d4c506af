// The training side of the row controller, against a planning server the test plays (TrainingCalls):
// what it asks at each level, when a job falls back to ceilings, and what it clears.
#include "wattcut/row_control/training_targets.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace wattcut::row_control {
namespace {

using polca::PolicyLevel;

// One job on a planning server the test plays: it records the calls, holds the target, and
// says whether every rank runs it.
struct ScriptedPlanningServer {
  std::optional<double> target_w;
  std::string reason;
  uint64_t version = 1;
  bool ranks_past = true;  // every rank past the apply step of `version`
  double lowest_w = 200;   // the job's lowest-power plan
  bool reachable = true;
  std::vector<std::string> calls;  // "PUT 300", "GET", "DELETE"
  double lease_s = 0;              // of the last PUT

  Result<JobPowerTarget> Answer() {
    JobPowerTarget t;
    t.target_w = target_w;
    t.reason = reason;
    t.kind = "peak_1s";
    t.applied = target_w.has_value();
    t.met = target_w && *target_w >= lowest_w;
    t.every_rank_past_apply_step = ranks_past;
    t.deployment_version = version;
    if (target_w) t.point_power_per_gpu_w = std::max(lowest_w, std::min(*target_w, 400.0));
    return t;
  }
  TrainingCalls Calls() {
    TrainingCalls c;
    c.set = [this](const std::string&, double w, const std::string& why, double lease) -> Result<JobPowerTarget> {
      calls.push_back("PUT " + std::to_string(int(w)));
      lease_s = lease;
      if (!reachable) return Error::Unavailable("cannot reach the planning server");
      if (target_w != w) {
        ++version;  // a new plan: a new deployment the ranks have not reached yet
        ranks_past = false;
      }
      target_w = w;
      reason = why;
      return Answer();
    };
    c.get = [this](const std::string&) -> Result<JobPowerTarget> {
      calls.push_back("GET");
      if (!reachable) return Error::Unavailable("cannot reach the planning server");
      return Answer();
    };
    c.clear = [this](const std::string&) -> Result<JobPowerTarget> {
      calls.push_back("DELETE");
      if (!reachable) return Error::Unavailable("cannot reach the planning server");
      if (target_w) {
        ++version;
        ranks_past = false;
      }
      target_w.reset();
      reason.clear();
      return Answer();
    };
    return c;
  }
};

constexpr double kResponseS = 5;
constexpr double kLeaseS = 30;
constexpr double kMaxAnswerAgeS = 3;

TrainingTargets Targets(ScriptedPlanningServer& server, bool shadow = false) {
  return TrainingTargets({"job-1", "job-1"}, polca::PolicySpec{}, kResponseS, kLeaseS, kMaxAnswerAgeS, shadow,
                         server.Calls());
}

const RowPolicyState kNormal{PolicyLevel::kNormal, false};
const RowPolicyState kT1{PolicyLevel::kT1, false};
const RowPolicyState kT2Low{PolicyLevel::kT2Low, false};
const RowPolicyState kT2High{PolicyLevel::kT2High, false};

TEST(TrainingTargets, TheLevelSetsTheTargetNoneT1AndT2) {
  const polca::PolicySpec policy;
  EXPECT_EQ(TrainingTargetFor(PolicyLevel::kNormal, policy), std::nullopt);
  EXPECT_EQ(TrainingTargetFor(PolicyLevel::kT1, policy), policy.t1_training_w);
  EXPECT_EQ(TrainingTargetFor(PolicyLevel::kT2Low, policy), policy.t2_training_w);
  EXPECT_EQ(TrainingTargetFor(PolicyLevel::kT2High, policy), policy.t2_training_w);
}

TEST(TrainingTargets, AReasonCarriesTheRowsStateAndOnlyOursParses) {
  const std::string reason = TrainingTargetReason({PolicyLevel::kT2Low, true}, 0.9123);
  EXPECT_EQ(reason, "wattcut polca control: polca level=t2-low brake=on; row at 91.2 % of its budget");
  EXPECT_EQ(ParseTrainingTargetReason(reason), (RowPolicyState{PolicyLevel::kT2Low, true}));
  EXPECT_EQ(ParseTrainingTargetReason("row 7 over its budget"), std::nullopt);
  EXPECT_EQ(ParseTrainingTargetReason("wattcut polca control: something else"), std::nullopt);
}

TEST(TrainingTargets, AJobThatCompliesGetsNoCeilingAndOneThatDoesNotFallsBackAfterTheResponseTime) {
  ScriptedPlanningServer server;
  TrainingTargets targets = Targets(server);
  ASSERT_EQ(targets.job_ids(), std::vector<std::string>{"job-1"}) << "one job, however many servers";
  auto r = targets.Run(kNormal, 0.7, 0);
  EXPECT_EQ(server.calls, std::vector<std::string>{"GET"}) << "it learns what the server holds once";
  EXPECT_EQ(r[0].state, TrainingState::kNone);

  r = targets.Run(kT1, 0.85, 1);
  EXPECT_EQ(server.calls.back(), "PUT 350");
  EXPECT_EQ(server.reason, "wattcut polca control: polca level=t1 brake=off; row at 85.0 % of its budget");
  EXPECT_EQ(r[0].target_w, 350);
  EXPECT_EQ(r[0].state, TrainingState::kRequested);
  EXPECT_FALSE(targets.falls_back("job-1"));
  r = targets.Run(kT1, 0.85, 5.9);
  EXPECT_EQ(server.calls.back(), "GET") << "a target the server holds is read, not sent again";
  EXPECT_EQ(r[0].state, TrainingState::kRequested) << r[0].detail;
  EXPECT_FALSE(targets.falls_back("job-1"));
  r = targets.Run(kT1, 0.85, 6);
  EXPECT_EQ(r[0].state, TrainingState::kFallback);
  EXPECT_TRUE(targets.falls_back("job-1"));
  EXPECT_NE(r[0].detail.find("not every rank is past the apply step of deployment version 2 after 5 s"),
            std::string::npos)
      << r[0].detail;

  server.ranks_past = true;  // late, but it complies: the ceilings go
  r = targets.Run(kT1, 0.8, 7);
  EXPECT_EQ(r[0].state, TrainingState::kComplied);
  EXPECT_FALSE(targets.falls_back("job-1"));
  EXPECT_NE(r[0].detail.find("every rank runs a plan of 350 W per GPU (deployment version 2)"), std::string::npos);
}

TEST(TrainingTargets, T2AsksForLessAndAStateChangeIsSentWithTheSameTarget) {
  ScriptedPlanningServer server;
  TrainingTargets targets = Targets(server);
  targets.Run(kT1, 0.85, 0);
  targets.Run(kT2Low, 0.9, 1);
  EXPECT_EQ(server.calls.back(), "PUT 300");
  EXPECT_EQ(server.version, 3u);
  targets.Run(kT2High, 0.9, 2);
  EXPECT_EQ(server.calls.back(), "PUT 300") << "the reason carries the state a restart resumes from";
  EXPECT_EQ(server.version, 3u) << "the same target is no new deployment";
  EXPECT_EQ(ParseTrainingTargetReason(server.reason), kT2High);
  server.ranks_past = true;
  EXPECT_EQ(targets.Run(kT2High, 0.9, 3)[0].state, TrainingState::kComplied);
}

TEST(TrainingTargets, ATargetsLeaseIsRenewedEveryThirdOfIt) {
  ScriptedPlanningServer server;
  server.ranks_past = true;
  TrainingTargets targets = Targets(server);
  targets.Run(kT1, 0.85, 0);
  EXPECT_EQ(server.lease_s, kLeaseS);
  server.ranks_past = true;
  for (int t = 1; t < 10; ++t) targets.Run(kT1, 0.85, t);
  EXPECT_EQ(std::count(server.calls.begin(), server.calls.end(), "PUT 350"), 1);
  targets.Run(kT1, 0.85, 10);
  EXPECT_EQ(server.calls.back(), "PUT 350") << "renewed at lease / 3";
  EXPECT_EQ(server.version, 2u) << "a renewal is no new deployment";
}

TEST(TrainingTargets, ATargetNoPlanMeetsFallsBackAtOnce) {
  ScriptedPlanningServer server;
  server.lowest_w = 320;
  TrainingTargets targets = Targets(server);
  auto r = targets.Run(kT2Low, 0.9, 0);
  EXPECT_EQ(r[0].state, TrainingState::kFallback);
  EXPECT_NE(r[0].detail.find("no plan of the job is at or below 300 W per GPU; its lowest is 320 W per GPU"),
            std::string::npos)
      << r[0].detail;
}

TEST(TrainingTargets, AnUnreachablePlanningServerFallsBackAtOnceAndIsAskedAgain) {
  ScriptedPlanningServer server;
  TrainingTargets targets = Targets(server);
  server.reachable = false;
  auto r = targets.Run(kT1, 0.85, 0);
  EXPECT_EQ(r[0].state, TrainingState::kFallback);
  EXPECT_NE(r[0].detail.find("cannot reach the planning server (ceilings until the planning server answers)"),
            std::string::npos);
  EXPECT_EQ(targets.call_errors(), 1u);
  EXPECT_TRUE(targets.Resume().empty());
  ASSERT_EQ(targets.resume_errors().size(), 1u);
  EXPECT_EQ(targets.resume_errors()[0], "cannot reach the planning server");
  server.reachable = true;
  server.ranks_past = true;
  server.target_w = 350;  // it had arrived before the connection broke
  server.reason = TrainingTargetReason(kT1, 0.85);
  r = targets.Run(kT1, 0.85, 1);
  EXPECT_EQ(server.calls.back(), "PUT 350") << "after an error it does not trust what it knew";
  EXPECT_EQ(r[0].state, TrainingState::kComplied);
}

TEST(TrainingTargets, AJobThatCompliedStandsForMaxReadingAgeWithoutAnAnswerThenFallsBack) {
  ScriptedPlanningServer server;
  TrainingTargets targets = Targets(server);
  targets.Run(kT1, 0.85, 0);
  server.ranks_past = true;
  EXPECT_EQ(targets.Run(kT1, 0.85, 1)[0].state, TrainingState::kComplied);
  server.reachable = false;  // a slow answer, a restart of the planning server
  auto r = targets.Run(kT1, 0.85, 2);
  EXPECT_EQ(r[0].state, TrainingState::kComplied) << r[0].detail;
  EXPECT_FALSE(targets.falls_back("job-1"));
  EXPECT_NE(r[0].detail.find("(it complied 1.0 s ago: ceilings after 3 s without an answer)"), std::string::npos)
      << r[0].detail;
  EXPECT_EQ(targets.Run(kT1, 0.85, 4)[0].state, TrainingState::kComplied);
  EXPECT_EQ(targets.Run(kT1, 0.85, 4.5)[0].state, TrainingState::kFallback);
  EXPECT_TRUE(targets.falls_back("job-1"));
  server.reachable = true;
  EXPECT_EQ(targets.Run(kT1, 0.85, 5)[0].state, TrainingState::kComplied);
  // A new target is not covered by the old one's compliance.
  server.reachable = false;
  EXPECT_EQ(targets.Run(kT2Low, 0.9, 6)[0].state, TrainingState::kFallback);
}

TEST(TrainingTargets, BackToNormalClearsOurTargetButNotAnOperatorsAndRetriesAFailedClear) {
  ScriptedPlanningServer server;
  TrainingTargets targets = Targets(server);
  targets.Run(kT1, 0.85, 0);
  server.reachable = false;
  auto r = targets.Run(kNormal, 0.7, 1);
  EXPECT_EQ(server.calls.back(), "DELETE");
  EXPECT_NE(r[0].detail.find("the target it set is not cleared"), std::string::npos) << r[0].detail;
  EXPECT_FALSE(targets.falls_back("job-1")) << "a row at normal needs no ceiling";
  server.reachable = true;
  r = targets.Run(kNormal, 0.7, 2);
  EXPECT_EQ(server.calls.back(), "DELETE");
  EXPECT_EQ(r[0].detail, "target cleared");
  EXPECT_EQ(server.target_w, std::nullopt);
  const size_t calls = server.calls.size();
  targets.Run(kNormal, 0.7, 3);
  EXPECT_EQ(server.calls.size(), calls) << "nothing to do at normal once the target is gone";

  ScriptedPlanningServer operated;
  operated.target_w = 250;
  operated.reason = "capacity test, ask ops";
  TrainingTargets other = Targets(operated);
  other.Run(kNormal, 0.7, 0);
  EXPECT_EQ(operated.calls, std::vector<std::string>{"GET"});
  EXPECT_EQ(operated.target_w, 250) << "a target someone else set is left alone";
}

TEST(TrainingTargets, ANewDeploymentAfterComplianceGetsTheResponseTimeAgain) {
  ScriptedPlanningServer server;
  TrainingTargets targets = Targets(server);
  targets.Run(kT1, 0.85, 0);
  server.ranks_past = true;
  EXPECT_EQ(targets.Run(kT1, 0.85, 1)[0].state, TrainingState::kComplied);
  ++server.version;  // a straggler report: a new plan the ranks reach at a later step
  server.ranks_past = false;
  EXPECT_EQ(targets.Run(kT1, 0.85, 20)[0].state, TrainingState::kRequested);
  EXPECT_EQ(targets.Run(kT1, 0.85, 24.9)[0].state, TrainingState::kRequested);
  EXPECT_EQ(targets.Run(kT1, 0.85, 25)[0].state, TrainingState::kFallback);
}

TEST(TrainingTargets, ResumeReadsTheRowsStateFromOurTargets) {
  ScriptedPlanningServer server;
  server.target_w = 300;
  server.reason = TrainingTargetReason(kT2High, 0.93);
  TrainingTargets targets = Targets(server);
  const std::vector<ObservedCeiling> observed = targets.Resume();
  ASSERT_EQ(observed.size(), 1u);
  EXPECT_EQ(ResumeState(observed), kT2High);
  targets.Run(kT2High, 0.93, 0);
  EXPECT_EQ(server.calls.back(), "GET") << "the target it resumed from is on the server already";
}

TEST(TrainingTargets, ShadowModeCallsNothing) {
  ScriptedPlanningServer server;
  TrainingTargets targets = Targets(server, /*shadow=*/true);
  EXPECT_TRUE(targets.Resume().empty());
  auto r = targets.Run(kT2Low, 0.95, 0);
  EXPECT_EQ(r[0].state, TrainingState::kRequested);
  EXPECT_EQ(r[0].target_w, 300);
  EXPECT_EQ(r[0].detail, "shadow mode: not sent");
  EXPECT_TRUE(server.calls.empty());
  EXPECT_FALSE(targets.falls_back("job-1"));
}

}  // namespace
}  // namespace wattcut::row_control
