#include "wattcut/row_control/decision_log_audit.h"

#include <gtest/gtest.h>

#include <sstream>

#include "wattcut/row_control/row_controller.h"
#include "wattcut/row_control/scripted_row_testing.h"

namespace wattcut::row_control {
namespace {

// A controller's log over a scripted day that crosses every level and the brake.
std::string LogOf(polca::PolicyKind policy, bool in_band, ScriptedRow& row, RowControllerOptions options) {
  options.policy = policy;
  options.in_band = in_band;
  RowController controller(options, ScriptedServers(), row.Calls());
  controller.Resume(0);
  double t = 0;
  auto run = [&](double w, int periods) {
    row.SetAll(w);
    for (int k = 0; k < periods; ++k) controller.RunPeriod(t += 1);
  };
  run(500, 5);
  run(960, 30);  // 96 %: POLCA's T2; near the headroom policy's guard
  run(990, 60);  // 99 %: above it
  row.answers[1] = false;
  run(400, 20);  // a stale server: nothing is released
  row.answers[1] = true;
  run(1050, 3);   // the brake
  run(400, 200);  // everything released
  std::string text;
  for (const std::string& line : row.log) text += line + "\n";
  return text;
}

Result<DecisionLogAudit> Audit(const std::string& text, const polca::PolcaConfig& config) {
  std::istringstream in(text);
  return AuditDecisionLog(in, "decisions.jsonl", config);
}

TEST(DecisionLogAudit, EveryPolicysLogReplaysToItsOwnCommands) {
  for (polca::PolicyKind policy : {polca::PolicyKind::kPolca, polca::PolicyKind::kHeadroom,
                                   polca::PolicyKind::kBrakeOnly, polca::PolicyKind::kUniformCap}) {
    for (bool in_band : {true, false}) {
      ScriptedRow row;
      RowControllerOptions options = ScriptedRowOptions(row);
      options.config.policy.headroom_window_s = 20;
      const std::string log = LogOf(policy, in_band, row, options);
      Result<DecisionLogAudit> audit = Audit(log, options.config);
      SCOPED_TRACE(polca::PolicyName(policy) + (in_band ? " in-band" : " out-of-band"));
      ASSERT_TRUE(audit.ok()) << audit.error().message;
      EXPECT_EQ(audit->runs, 1);
      EXPECT_EQ(audit->decisions, 318);
      EXPECT_GT(audit->commands, 0);
      EXPECT_EQ(audit->mismatched_lines, 0) << (audit->mismatches.empty() ? "" : audit->mismatches.front());
      EXPECT_EQ(audit->policies, std::vector<std::string>{polca::PolicyName(policy)});
    }
  }
}

TEST(DecisionLogAudit, TheRowsServersAreLoggedSoThatTheAuditKnowsTheHeadroomPolicysCeilings) {
  // Four servers provisioned at 1,000 W each on a 4,000 W budget: the row cannot read above it, so
  // the headroom policy locks nothing at 96 and 99 % (only the brake acts, on a 105 % reading).
  ScriptedRow row;
  RowControllerOptions options = ScriptedRowOptions(row);
  options.config.policy.headroom_window_s = 20;
  options.config.row.provisioned_w_per_server = 1000;
  const std::string log = LogOf(polca::PolicyKind::kHeadroom, false, row, options);
  EXPECT_NE(log.find("\"servers\":{\"high_priority\":2,\"low_priority\":2,\"training\":0}"), std::string::npos)
      << log.substr(0, log.find('\n'));
  EXPECT_EQ(log.find("\"target\":\"low\""), std::string::npos) << "no lock";
  Result<DecisionLogAudit> audit = Audit(log, options.config);
  ASSERT_TRUE(audit.ok()) << audit.error().message;
  EXPECT_EQ(audit->mismatched_lines, 0) << (audit->mismatches.empty() ? "" : audit->mismatches.front());
  // Without the servers (a log of an older controller), the policy has no ceilings and would have
  // locked: the audit says so.
  std::string without = log;
  const size_t at = without.find(",\"servers\":{");
  without.erase(at, without.find('}', at) + 1 - at);
  Result<DecisionLogAudit> older = Audit(without, options.config);
  ASSERT_TRUE(older.ok()) << older.error().message;
  EXPECT_GT(older->mismatched_lines, 0);
  // A count that is not a whole number of servers is refused, naming the field.
  std::string bad = log;
  bad.replace(bad.find("\"low_priority\":2"), 16, "\"low_priority\":-1");
  Result<DecisionLogAudit> refused = Audit(bad, options.config);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("decisions.jsonl:1: started.servers.field 'low_priority': expected a whole "
                                         "number of servers"),
            std::string::npos)
      << refused.error().message;
}

TEST(DecisionLogAudit, ARestartedControllerAppendsARunThatReplaysFromItsResumedState) {
  ScriptedRow row;
  RowControllerOptions options = ScriptedRowOptions(row);
  options.policy = polca::PolicyKind::kHeadroom;
  std::string log;
  {
    RowController first(options, ScriptedServers(), row.Calls());
    first.Resume(0);
    row.SetAll(990);
    for (int t = 1; t <= 10; ++t) first.RunPeriod(t);
  }
  // The second controller finds the first one's ceilings on the agents.
  row.ceilings.assign(4, std::vector<ObservedCeiling>{{row.sends.back().front().reason, 20}});
  RowController second(options, ScriptedServers(), row.Calls());
  EXPECT_NE(second.Resume(0).level, polca::PolicyLevel::kNormal);
  row.SetAll(400);
  for (int t = 1; t <= 200; ++t) second.RunPeriod(t);
  for (const std::string& line : row.log) log += line + "\n";
  Result<DecisionLogAudit> audit = Audit(log, options.config);
  ASSERT_TRUE(audit.ok()) << audit.error().message;
  EXPECT_EQ(audit->runs, 2);
  EXPECT_EQ(audit->decisions, 210);
  EXPECT_EQ(audit->mismatched_lines, 0) << (audit->mismatches.empty() ? "" : audit->mismatches.front());
}

TEST(DecisionLogAudit, ALineThePolicyWouldNotHaveWrittenIsReportedWithItsLineNumber) {
  ScriptedRow row;
  RowControllerOptions options = ScriptedRowOptions(row);
  std::string log = LogOf(polca::PolicyKind::kPolca, true, row, options);
  // The first lock's clock, changed.
  const std::string first_lock = "\"lock_mhz\":" + std::to_string(static_cast<int>(options.config.policy.t2_low_mhz));
  const size_t at = log.find(first_lock);
  ASSERT_NE(at, std::string::npos) << log.substr(0, 2000);
  const int64_t line = std::count(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1;
  log.replace(at, first_lock.size(), "\"lock_mhz\":1200");
  Result<DecisionLogAudit> audit = Audit(log, options.config);
  ASSERT_TRUE(audit.ok()) << audit.error().message;
  EXPECT_GE(audit->mismatched_lines, 1);
  ASSERT_FALSE(audit->mismatches.empty());
  EXPECT_NE(audit->mismatches.front().find("decisions.jsonl:" + std::to_string(line) + ": "), std::string::npos)
      << audit->mismatches.front();
  EXPECT_NE(audit->mismatches.front().find("the log shows low 1200 MHz"), std::string::npos)
      << audit->mismatches.front();

  // Audited with other thresholds than the controller ran with: its decisions are not these.
  polca::PolcaConfig other = options.config;
  other.policy.t2 = 0.97;
  Result<DecisionLogAudit> wrong = Audit(LogOf(polca::PolicyKind::kPolca, true, row, options), other);
  ASSERT_TRUE(wrong.ok());
  EXPECT_GT(wrong->mismatched_lines, 0);
}

TEST(DecisionLogAudit, BadLinesAreErrorsNamingTheLineAndTheField) {
  ScriptedRow row;
  RowControllerOptions options = ScriptedRowOptions(row);
  const std::string log = LogOf(polca::PolicyKind::kPolca, true, row, options);
  const std::string first = log.substr(0, log.find('\n') + 1);
  const std::string second = log.substr(first.size(), log.find('\n', first.size()) + 1 - first.size());
  auto message = [&](const std::string& text) {
    Result<DecisionLogAudit> audit = Audit(text, options.config);
    return audit.ok() ? std::string("ok") : audit.error().message;
  };
  EXPECT_EQ(message(""), "ok") << "an empty log has nothing wrong in it";
  EXPECT_NE(message(second).find("decisions.jsonl:1: the log starts without a controller's field 'started'"),
            std::string::npos)
      << message(second);
  EXPECT_NE(message(first + "{not json\n").find("decisions.jsonl:2: malformed JSON"), std::string::npos);
  EXPECT_NE(message(first + "[1, 2]\n").find("decisions.jsonl:2: expected a JSON object"), std::string::npos);
  std::string no_fraction = second;
  no_fraction.replace(no_fraction.find("\"fraction\""), 10, "\"fractoin\"");
  EXPECT_NE(message(first + no_fraction).find("decisions.jsonl:2: field 'fraction': expected a number"),
            std::string::npos)
      << message(first + no_fraction);
  std::string bad_state = second;
  bad_state.replace(bad_state.find("\"state\":\"normal\""), 16, "\"state\":\"t3\"");
  EXPECT_NE(message(first + bad_state).find("field 'state': expected normal, t1, t2-low or t2-high"), std::string::npos)
      << message(first + bad_state);
  std::string bad_policy = first;
  bad_policy.replace(bad_policy.find("\"policy\":\"polca\""), 16, "\"policy\":\"magic\"");
  EXPECT_NE(message(bad_policy).find("decisions.jsonl:1: started.field 'policy': unknown policy 'magic'"),
            std::string::npos)
      << message(bad_policy);
  EXPECT_NE(message(first + std::string(kMaxDecisionLogLineBytes + 1, 'x') + "\n").find("decisions.jsonl:2: a line of"),
            std::string::npos);
  Result<DecisionLogAudit> folder = AuditDecisionLogFile("/", options.config);
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.error().message.find("is a folder"), std::string::npos);
  Result<DecisionLogAudit> missing = AuditDecisionLogFile("/nonexistent/decisions.jsonl", options.config);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/decisions.jsonl: No such file"), std::string::npos);
}

}  // namespace
}  // namespace wattcut::row_control
