// The controller's loop over a row whose readings the test writes and whose agents' answers it
// records (RowCalls); the same loop against real agents is tests/row_control's integration test.
#include "wattcut/row_control/row_controller.h"

#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "wattcut/row_control/scripted_row_testing.h"

namespace wattcut::row_control {
namespace {

using polca::PolicyLevel;
using polca::Priority;

// server index -> ceiling, over one period's sends.
std::map<size_t, std::optional<int>> Sent(const std::vector<CeilingCommand>& commands) {
  std::map<size_t, std::optional<int>> out;
  for (const CeilingCommand& c : commands) out[c.server] = c.mhz;
  return out;
}

TEST(RowController, LowPriorityIsCappedFirstThenHighThenEverythingIsReleased) {
  ScriptedRow row;
  RowController controller(ScriptedRowOptions(row), ScriptedServers(), row.Calls());
  const polca::PolicySpec spec;
  double t = 0;
  controller.RunPeriod(t += 1);
  EXPECT_EQ(row.sends.size(), 1u) << "the first period clears whatever was there";
  row.sends.clear();
  row.SetAll(850);  // 85 %: above T1
  controller.RunPeriod(t += 1);
  ASSERT_EQ(row.sends.size(), 1u);
  EXPECT_EQ(Sent(row.sends[0]),
            (std::map<size_t, std::optional<int>>{{2, int(spec.t1_low_mhz)}, {3, int(spec.t1_low_mhz)}}));
  row.SetAll(950);  // above T2: low priority further down, then high priority at the next reading
  controller.RunPeriod(t += 1);
  EXPECT_EQ(Sent(row.sends.back())[2], int(spec.t2_low_mhz));
  controller.RunPeriod(t += 1);
  EXPECT_EQ(Sent(row.sends.back())[0], int(spec.t2_high_mhz));
  EXPECT_EQ(controller.policy().level(), PolicyLevel::kT2High);
  row.SetAll(600);  // below every release threshold
  controller.RunPeriod(t += 1);
  EXPECT_EQ(Sent(row.sends.back()), (std::map<size_t, std::optional<int>>{
                                        {0, std::nullopt}, {1, std::nullopt}, {2, std::nullopt}, {3, std::nullopt}}));
}

// /metrics: the row's power against its budget and the policy's thresholds (what a dashboard
// draws them against), and the state.
TEST(RowController, MetricsShowThePowerTheBudgetTheThresholdsAndTheState) {
  ScriptedRow row;
  RowControllerOptions options = ScriptedRowOptions(row);
  options.config.policy.t1 = 0.7;
  RowController controller(options, ScriptedServers(), row.Calls());
  row.SetAll(900);  // 90 % of the budget: above T2
  controller.RunPeriod(0);
  const std::string text = controller.RenderMetrics();
  EXPECT_NE(text.find("wattcut_row_power_watts 3600\n"), std::string::npos) << text;
  EXPECT_NE(text.find("wattcut_row_budget_watts 4000\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE wattcut_row_threshold_fraction gauge\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_row_threshold_fraction{threshold=\"t1\"} 0.7\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_row_threshold_fraction{threshold=\"t2\"} 0.89\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_row_threshold_fraction{threshold=\"brake_release\"} 0.89\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_row_state{state=\"t2-low\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("wattcut_row_brake 0\n"), std::string::npos);

  // The headroom policy's own thresholds, not POLCA's, which it does not act on.
  options.policy = polca::PolicyKind::kHeadroom;
  RowController headroom(options, ScriptedServers(), row.Calls());
  headroom.RunPeriod(0);
  const std::string its = headroom.RenderMetrics();
  EXPECT_NE(its.find("wattcut_row_threshold_fraction{threshold=\"headroom_guard\"} 0.97\n"), std::string::npos) << its;
  EXPECT_NE(its.find("wattcut_row_threshold_fraction{threshold=\"headroom_release\"} 0.92\n"), std::string::npos);
  EXPECT_NE(its.find("wattcut_row_threshold_fraction{threshold=\"brake\"} 1\n"), std::string::npos);
  EXPECT_EQ(its.find("threshold=\"t1\""), std::string::npos);
  // And what it takes off its forecast (nothing yet: its record needs five minutes of forecasts).
  EXPECT_NE(its.find("wattcut_row_forecast_correction_fraction 0\n"), std::string::npos);
  EXPECT_EQ(text.find("wattcut_row_forecast_correction_fraction"), std::string::npos) << "POLCA has no forecast";
  // And a young window's trend in full (its record has no young forecasts yet either).
  EXPECT_NE(its.find("wattcut_row_young_forecast_trend_fraction 1\n"), std::string::npos);
  EXPECT_EQ(text.find("wattcut_row_young_forecast_trend_fraction"), std::string::npos);
}

TEST(RowController, TheBrakeCapsEveryServerAtTheBrakeClock) {
  ScriptedRow row;
  RowController controller(ScriptedRowOptions(row), ScriptedServers(), row.Calls());
  controller.RunPeriod(1);
  row.SetAll(1100);
  controller.RunPeriod(2);
  for (const auto& [server, mhz] : Sent(row.sends.back())) EXPECT_EQ(mhz, int(polca::PolicySpec{}.brake_mhz)) << server;
  EXPECT_EQ(controller.policy().brake_engagements(), 1);
}

TEST(RowController, ShadowModeSendsNothingAndLogsWhatItWouldSendOnce) {
  ScriptedRow row;
  RowController controller(ScriptedRowOptions(row, /*shadow=*/true), ScriptedServers(), row.Calls());
  row.SetAll(850);
  controller.RunPeriod(1);
  controller.RunPeriod(2);
  EXPECT_TRUE(row.sends.empty());
  ASSERT_EQ(row.log.size(), 2u);
  auto first = nlohmann::json::parse(row.log[0]);
  EXPECT_EQ(first["mode"], "shadow");
  EXPECT_EQ(first["would_send"].size(), 4u);
  EXPECT_EQ(first["state"], "t1");
  EXPECT_EQ(nlohmann::json::parse(row.log[1])["would_send"].size(), 0u);
}

TEST(RowController, AStaleServerCountsAtItsLastReadingThenItsPeakAndNeverReleases) {
  ScriptedRow row;
  RowController controller(ScriptedRowOptions(row), ScriptedServers(), row.Calls());
  row.power_w = {950, 600, 600, 600};  // h0's peak is 950
  controller.RunPeriod(1);
  row.power_w = {400, 900, 900, 900};  // 77.5 %: normal
  controller.RunPeriod(2);
  row.SetAll(900);  // 90 %: above T2
  controller.RunPeriod(3);
  EXPECT_GE(controller.policy().level(), PolicyLevel::kT2Low);
  row.answers[0] = false;  // h0 goes quiet at 900 W
  row.power_w = {0, 100, 100, 100};
  auto report = controller.RunPeriod(4);
  EXPECT_EQ(report.stale_servers, std::vector<std::string>{"h0"});
  EXPECT_DOUBLE_EQ(report.row_power_w, 900 + 300) << "its last reading, while young";
  EXPECT_GE(controller.policy().level(), PolicyLevel::kT2Low) << "a stale reading never releases";
  report = controller.RunPeriod(20);
  EXPECT_DOUBLE_EQ(report.row_power_w, 950 + 300) << "older than max_reading_age_s: its peak";
  EXPECT_GE(controller.policy().level(), PolicyLevel::kT2Low);
  row.answers[0] = true;
  controller.RunPeriod(21);
  EXPECT_EQ(controller.policy().level(), PolicyLevel::kNormal) << "seen again: the row is handled again";
}

// One agent answering 1e300 W once braked the whole row. A reading no server can draw is a stale
// reading with its reason (in the report and the log), never a brake by itself.
TEST(RowController, AReadingNoServerCanDrawIsStaleWithItsReasonNotABrake) {
  ScriptedRow row;
  RowControllerOptions options = ScriptedRowOptions(row);
  options.config.row.provisioned_w_per_server = 1000;  // readings above 2,000 W are not physical
  RowController controller(options, ScriptedServers(), row.Calls());
  controller.RunPeriod(1);  // every server at 500 W
  double t = 1;
  for (double wild : {1e300, 2000.5, -5.0, std::nan(""), HUGE_VAL}) {
    row.power_w = {wild, 500, 500, 500};
    Decision report = controller.RunPeriod(t += 1);
    EXPECT_EQ(report.stale_servers, std::vector<std::string>{"h0"}) << wild;
    ASSERT_EQ(report.stale_reasons.count("h0"), 1u) << wild;
    EXPECT_NE(report.stale_reasons["h0"].find("is not a physical reading (outside [0, 2000 W], 2 x "
                                              "row.provisioned_w_per_server)"),
              std::string::npos)
        << report.stale_reasons["h0"];
    EXPECT_DOUBLE_EQ(report.row_power_w, 2000) << "h0 at its last reading, 500 W";
    EXPECT_FALSE(report.brake) << wild;
    EXPECT_EQ(controller.policy().level(), PolicyLevel::kNormal) << wild;
  }
  EXPECT_NE(nlohmann::json::parse(row.log.back())["stale_reasons"]["h0"].get<std::string>().find("power_w inf W"),
            std::string::npos)
      << row.log.back();
  row.power_w = {2000, 500, 500, 500};  // at the bound: a reading
  EXPECT_TRUE(controller.RunPeriod(t += 1).stale_servers.empty());
  row.answers[1] = false;
  Decision unreachable = controller.RunPeriod(t += 1);
  EXPECT_EQ(unreachable.stale_reasons["h1"], "timed out") << "an agent's error is its reason";
}

TEST(RowController, ARestartedControllerResumesFromTheAgentsCeilings) {
  ScriptedRow row;
  row.ceilings = {
      Result<std::vector<ObservedCeiling>>(std::vector<ObservedCeiling>{{"polca level=t2-low brake=off", 25}}),
      Result<std::vector<ObservedCeiling>>(Error::Unavailable("down"))};
  RowController controller(ScriptedRowOptions(row), ScriptedServers(), row.Calls());
  EXPECT_EQ(controller.Resume(0), (RowPolicyState{PolicyLevel::kT2Low, false}));
  row.SetAll(870);  // between T2's release (84 %) and T2 (89 %): stays in T2, low priority capped
  controller.RunPeriod(1);
  EXPECT_EQ(controller.policy().level(), PolicyLevel::kT2Low);
  EXPECT_EQ(Sent(row.sends.back())[2], int(polca::PolicySpec{}.t2_low_mhz));
  EXPECT_EQ(Sent(row.sends.back()).count(0), 1u);  // high priority: told "none" once (its view was unknown)
}

TEST(RowController, CeilingsAreRenewedBeforeTheirLeaseRunsOut) {
  ScriptedRow row;
  RowControllerOptions options = ScriptedRowOptions(row);
  options.ceiling_lease_s = 30;
  RowController controller(options, ScriptedServers(), row.Calls());
  row.SetAll(850);
  controller.RunPeriod(0);
  row.sends.clear();
  for (int t = 1; t <= 10; ++t) controller.RunPeriod(t);
  ASSERT_EQ(row.sends.size(), 1u) << "one renewal at lease / 3 = 10 s";
  EXPECT_EQ(row.sends[0].size(), 2u) << "the two capped servers";
  EXPECT_DOUBLE_EQ(row.sends[0][0].lease_s, 30);
  EXPECT_EQ(row.sends[0][0].reason, "polca level=t1 brake=off");
}

TEST(RowController, OutOfBandCommandsAreHeldForTheActuationLatency) {
  ScriptedRow row;
  RowControllerOptions options = ScriptedRowOptions(row, false, /*in_band=*/false);
  options.config.control.actuation_latency_s = 5;
  RowController controller(options, ScriptedServers(), row.Calls());
  controller.RunPeriod(0);
  row.sends.clear();
  row.SetAll(850);
  controller.RunPeriod(1);
  for (int t = 2; t < 6; ++t) controller.RunPeriod(t);
  EXPECT_TRUE(row.sends.empty()) << "effective at 6 s";
  controller.RunPeriod(6);
  ASSERT_EQ(row.sends.size(), 1u);
  EXPECT_EQ(Sent(row.sends[0]).size(), 2u);
}

TEST(RowController, TheDecisionLogReplaysThroughThePolicyToTheSameCommands) {
  ScriptedRow row;
  RowController controller(ScriptedRowOptions(row), ScriptedServers(), row.Calls());
  const std::vector<double> profile = {500, 850, 950, 950, 1100, 800, 700, 600, 500};
  double t = 0;
  for (double w : profile) {
    row.SetAll(w);
    controller.RunPeriod(t += 1);
  }
  polca::ControlSpec control;
  control.max_reading_age_s = 10;
  control.actuation_latency_s = 0;
  control.brake_latency_s = 0;
  polca::RowPowerPolicy replay(polca::PolicyKind::kPolca, polca::PolicySpec{}, control);
  size_t commands = 0;
  for (const std::string& line : row.log) {
    auto doc = nlohmann::json::parse(line);
    auto again = replay.Decide({doc["measured_at_s"], doc["fraction"], doc["stale_servers"].empty()}, doc["time"]);
    ASSERT_EQ(again.size(), doc["commands"].size()) << line;
    for (size_t k = 0; k < again.size(); ++k) {
      EXPECT_DOUBLE_EQ(again[k].effective_at_s, doc["commands"][k]["effective_at_s"].get<double>());
    }
    commands += again.size();
  }
  EXPECT_GE(commands, 5u);
}

// A row of two inference servers and two servers of one training job; the job's planning server
// is played by the test: it takes the target and says whether every rank runs a plan under it.
struct ScriptedTrainingJob {
  std::optional<double> target_w;
  std::string reason;
  bool complies = true;  // every rank reaches the capped plan (else it ignores the target)
  bool reachable = true;
  std::vector<std::string> calls;

  Result<JobPowerTarget> Answer() {
    if (!reachable) return Error::Unavailable("planning server: cannot connect");
    JobPowerTarget t;
    t.target_w = target_w;
    t.reason = reason;
    t.applied = target_w.has_value();
    t.met = true;
    t.every_rank_past_apply_step = complies;
    t.deployment_version = 2;
    t.point_power_per_gpu_w = target_w;
    return t;
  }
  TrainingCalls Calls() {
    TrainingCalls c;
    c.set = [this](const std::string&, double w, const std::string& why, double) {
      calls.push_back("PUT");
      if (reachable) {
        target_w = w;
        reason = why;
      }
      return Answer();
    };
    c.get = [this](const std::string&) {
      calls.push_back("GET");
      return Answer();
    };
    c.clear = [this](const std::string&) {
      calls.push_back("DELETE");
      if (reachable) target_w.reset();
      return Answer();
    };
    return c;
  }
};

std::vector<ControlledServer> TrainingRow() {
  return {{"h0", Priority::kHigh, ""},
          {"l0", Priority::kLow, ""},
          {"t0", Priority::kLow, "job-7"},
          {"t1", Priority::kLow, "job-7"}};
}

// A job id is the operator's text: quoted in the metrics' labels as the exposition format asks,
// so one with a quote or a backslash leaves every other line readable.
TEST(RowController, ATrainingJobsIdIsQuotedInTheMetricsLabels) {
  ScriptedRow row;
  ScriptedTrainingJob job;
  RowCalls calls = row.Calls();
  calls.training = job.Calls();
  RowController controller(ScriptedRowOptions(row),
                           {{"h0", Priority::kHigh, ""}, {"t0", Priority::kLow, "job \"7\" \\ nightly"}}, calls);
  controller.RunPeriod(0);
  row.SetAll(850);
  controller.RunPeriod(1);
  const std::string text = controller.RenderMetrics();
  EXPECT_NE(text.find("wattcut_row_training_target_watts{job_id=\"job \\\"7\\\" \\\\ nightly\"} "), std::string::npos)
      << text;
  EXPECT_EQ(text.find("{job_id=\"job \"7"), std::string::npos) << text;
}

TEST(RowController, ATrainingJobGetsATargetInsteadOfALockAndCeilingsOnlyWhenItDoesNotComply) {
  ScriptedRow row;
  ScriptedTrainingJob job;
  RowCalls calls = row.Calls();
  calls.training = job.Calls();
  RowControllerOptions options = ScriptedRowOptions(row);
  options.config.control.training_response_s = 3;
  RowController controller(options, TrainingRow(), calls);
  const polca::PolicySpec spec;
  controller.RunPeriod(0);
  row.SetAll(850);  // T1
  Decision d = controller.RunPeriod(1);
  EXPECT_EQ(job.target_w, spec.t1_training_w);
  EXPECT_EQ(Sent(d.sent), (std::map<size_t, std::optional<int>>{{1, int(spec.t1_low_mhz)}}))
      << "low priority is locked; the training servers are not";
  ASSERT_EQ(d.training.size(), 1u);
  EXPECT_EQ(d.training[0].state, TrainingState::kComplied);
  auto logged = nlohmann::json::parse(row.log.back());
  EXPECT_EQ(logged["training"][0]["job_id"], "job-7");
  EXPECT_EQ(logged["training"][0]["target_w"], spec.t1_training_w);
  EXPECT_EQ(logged["training"][0]["state"], "complied");
  EXPECT_NE(controller.RenderMetrics().find("wattcut_row_training_target_watts{job_id=\"job-7\"} 350\n"),
            std::string::npos);

  job.complies = false;  // a new deployment it never reaches: T2's target
  row.SetAll(950);
  d = controller.RunPeriod(2);
  EXPECT_EQ(job.target_w, spec.t2_training_w);
  EXPECT_EQ(d.training[0].state, TrainingState::kRequested);
  EXPECT_EQ(Sent(d.sent).count(2), 0u) << "within the response time: no ceiling yet";
  controller.RunPeriod(3);
  controller.RunPeriod(4);
  d = controller.RunPeriod(5);
  EXPECT_EQ(d.training[0].state, TrainingState::kFallback);
  EXPECT_EQ(Sent(d.sent)[2], int(spec.t2_low_mhz)) << "the low-priority class's ceiling, on each of its servers";
  EXPECT_EQ(Sent(d.sent)[3], int(spec.t2_low_mhz));
  EXPECT_NE(controller.RenderMetrics().find("wattcut_row_training_fallback{job_id=\"job-7\"} 1\n"), std::string::npos);

  job.complies = true;  // late, but it runs the capped plan: its ceilings go
  d = controller.RunPeriod(6);
  EXPECT_EQ(d.training[0].state, TrainingState::kComplied);
  EXPECT_EQ(Sent(d.sent), (std::map<size_t, std::optional<int>>{{2, std::nullopt}, {3, std::nullopt}}));

  row.SetAll(1100);  // the brake: every server, training too
  d = controller.RunPeriod(7);
  for (size_t server = 0; server < 4; ++server) EXPECT_EQ(Sent(d.sent)[server], int(spec.brake_mhz)) << server;

  row.SetAll(500);  // normal: the target is cleared and no ceiling is left
  controller.RunPeriod(8);
  EXPECT_EQ(job.calls.back(), "DELETE");
  EXPECT_EQ(job.target_w, std::nullopt);
  EXPECT_EQ(controller.policy().level(), PolicyLevel::kNormal);
}

TEST(RowController, AnUnreachablePlanningServerPutsCeilingsOnTheTrainingServersAtOnce) {
  ScriptedRow row;
  ScriptedTrainingJob job;
  job.reachable = false;
  RowCalls calls = row.Calls();
  calls.training = job.Calls();
  RowController controller(ScriptedRowOptions(row), TrainingRow(), calls);
  controller.RunPeriod(0);
  row.SetAll(850);
  Decision d = controller.RunPeriod(1);
  EXPECT_EQ(d.training[0].state, TrainingState::kFallback);
  EXPECT_EQ(Sent(d.sent)[2], int(polca::PolicySpec{}.t1_low_mhz));
  EXPECT_TRUE(controller.training().resume_errors().empty()) << "Resume was not called";
  EXPECT_NE(controller.RenderMetrics().find("wattcut_row_planning_errors_total 2\n"), std::string::npos)
      << "the read at start and the PUT";
}

TEST(RowController, ARestartedControllerResumesFromItsTrainingTargets) {
  ScriptedRow row;
  ScriptedTrainingJob job;
  job.target_w = 300;
  job.reason = TrainingTargetReason({PolicyLevel::kT2Low, false}, 0.9);
  RowCalls calls = row.Calls();
  calls.training = job.Calls();
  RowController controller(ScriptedRowOptions(row), TrainingRow(), calls);
  EXPECT_EQ(controller.Resume(0), (RowPolicyState{PolicyLevel::kT2Low, false}))
      << "no agent holds a ceiling; the job's target holds the state";
  EXPECT_TRUE(controller.training().resume_errors().empty());
  row.SetAll(870);  // between T2's release and T2: stays
  controller.RunPeriod(1);
  EXPECT_EQ(controller.policy().level(), PolicyLevel::kT2Low);
  EXPECT_EQ(job.target_w, 300);
}

}  // namespace
}  // namespace wattcut::row_control
