#include "wattcut/server/http_api.h"

#include <gtest/gtest.h>

#include "wattcut/plan/planning_limits.h"

namespace wattcut::server {
namespace {

using nlohmann::json;

TEST(HttpApi, ParsesZeusJobInfo) {
  auto reg = JobRegistrationFromJson(json::parse(
      R"({"job_id": "", "pp_degree": 8, "dp_degree": 16, "tp_degree": 8, "world_size": 1024,
          "job_metadata": "gpt3"})"));
  ASSERT_TRUE(reg.ok()) << reg.error().message;
  EXPECT_EQ(reg->info.world_size, 1024);
  EXPECT_EQ(*reg->info.job_metadata, "gpt3");
  EXPECT_FALSE(reg->planner.has_value());
}

TEST(HttpApi, RejectsWorldSizeMismatchAndNamesTheField) {
  auto reg =
      JobRegistrationFromJson(json::parse(R"({"pp_degree": 2, "dp_degree": 1, "tp_degree": 1, "world_size": 3})"));
  ASSERT_FALSE(reg.ok());
  EXPECT_NE(reg.error().message.find("world_size"), std::string::npos);
}

TEST(HttpApi, RejectsWrongTypes) {
  auto reg =
      JobRegistrationFromJson(json::parse(R"({"pp_degree": "2", "dp_degree": 1, "tp_degree": 1, "world_size": 2})"));
  ASSERT_FALSE(reg.ok());
  EXPECT_NE(reg.error().message.find("'pp_degree': expected an integer, got string"), std::string::npos);
  EXPECT_FALSE(JobRegistrationFromJson(json::parse("[1,2]")).ok());
  EXPECT_FALSE(
      JobRegistrationFromJson(json::parse(R"({"pp_degree": 1e300, "dp_degree": 1, "tp_degree": 1, "world_size": 1})"))
          .ok());
  EXPECT_FALSE(JobRegistrationFromJson(json::parse(R"({"pp_degree": 18446744073709551615, "dp_degree": 1,
                                   "tp_degree": 1, "world_size": 1})"))
                   .ok());
}

TEST(HttpApi, ADegreeOfZeroIsBelowItsRange) {
  auto reg =
      JobRegistrationFromJson(json::parse(R"({"pp_degree": 0, "dp_degree": 0, "tp_degree": 0, "world_size": 0})"));
  ASSERT_FALSE(reg.ok());
  EXPECT_NE(reg.error().message.find("'pp_degree': 0 is out of range [1, "), std::string::npos) << reg.error().message;
}

TEST(HttpApi, NonEmptyJobIdIsRefused) {
  auto reg = JobRegistrationFromJson(
      json::parse(R"({"job_id": "x", "pp_degree": 1, "dp_degree": 1, "tp_degree": 1, "world_size": 1})"));
  ASSERT_FALSE(reg.ok());
  EXPECT_NE(reg.error().message.find("job_id"), std::string::npos);
}

TEST(HttpApi, MalformedJsonIsReported) {
  auto j = ParseJsonBody("{\"a\": ");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.error().message.find("malformed JSON"), std::string::npos);
  EXPECT_FALSE(ParseJsonBody("").ok());
}

TEST(HttpApi, RankInfoNeedsIntegerFrequencies) {
  EXPECT_TRUE(RankInfoFromJson(json::parse(R"({"rank": 0, "dp_rank": 0, "pp_rank": 0,
      "tp_rank": 0, "available_frequencies": [1410, 1395]})"))
                  .ok());
  auto bad = RankInfoFromJson(json::parse(R"({"rank": 0, "dp_rank": 0, "pp_rank": 0,
      "tp_rank": 0, "available_frequencies": [1410, "fast"]})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("available_frequencies[1]"), std::string::npos);
  EXPECT_FALSE(RankInfoFromJson(json::parse(R"({"rank": -1, "dp_rank": 0, "pp_rank": 0,
      "tp_rank": 0, "available_frequencies": [1410]})"))
                   .ok());
}

TEST(HttpApi, ProfilingResultBreakdowns) {
  auto r = ProfilingResultFromJson(json::parse(R"({"rank": 3, "iter_time": [1.0],
      "iter_energy": [100.0], "time_breakdown": {"forward": [[0.1, 0.2]]},
      "energy_breakdown": {"forward": [[10, 20]]}})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->time_breakdown.at("forward")[0][1], 0.2);
  auto bad = ProfilingResultFromJson(json::parse(R"({"rank": 3, "iter_time": [1.0],
      "iter_energy": [100.0], "time_breakdown": {"forward": [0.1]}})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("time_breakdown.forward"), std::string::npos);
}

TEST(HttpApi, RankProfileFrequencyKeys) {
  auto p = RankProfileFromJson(json::parse(R"({"rank": 0, "dp_rank": 0, "pp_rank": 0, "tp_rank": 0,
      "forward_time": {"1410": 0.01}, "forward_energy": {"1410": 2.0},
      "backward_time": {"1410": 0.02}, "backward_energy": {"1410": 4.0}})"));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->forward_time.at(1410), 0.01);
  auto bad = RankProfileFromJson(json::parse(R"({"rank": 0, "dp_rank": 0, "pp_rank": 0,
      "tp_rank": 0, "forward_time": {"fast": 0.01}, "forward_energy": {"1410": 2.0},
      "backward_time": {"1410": 0.02}, "backward_energy": {"1410": 4.0}})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("'fast'"), std::string::npos);
}

// A zero-bubble rank's split backward: B and W as measured, with or without the whole
// backward, and each inconsistency refused naming its fields.
TEST(HttpApi, RankProfileSplitBackward) {
  const json split = json::parse(R"({"rank": 3, "dp_rank": 0, "pp_rank": 1, "tp_rank": 0,
      "forward_time": {"1410": 0.01, "900": 0.02}, "forward_energy": {"1410": 2.0, "900": 1.5},
      "backward_input_time": {"1410": 0.008, "900": 0.016}, "backward_input_energy": {"1410": 1.6, "900": 1.2},
      "backward_weight_time": {"1410": 0.012, "900": 0.024}, "backward_weight_energy": {"1410": 2.4, "900": 1.8}})");
  auto p = RankProfileFromJson(split);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_TRUE(p->has_split_backward());
  EXPECT_TRUE(p->backward_time.empty());
  EXPECT_EQ(p->backward_input_time.at(1410), 0.008);
  EXPECT_EQ(p->backward_input_energy.at(900), 1.2);
  EXPECT_EQ(p->backward_weight_time.at(900), 0.024);
  EXPECT_EQ(p->backward_weight_energy.at(1410), 2.4);
  // Stored and read back as it was; a profile without the split has no split fields.
  auto again = RankProfileFromJson(ToJson(*p));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->backward_input_time, p->backward_input_time);
  EXPECT_EQ(again->backward_weight_energy, p->backward_weight_energy);
  EXPECT_TRUE(again->backward_time.empty());
  RankProfile whole = *p;
  whole.backward_input_time.clear();
  whole.backward_input_energy.clear();
  whole.backward_weight_time.clear();
  whole.backward_weight_energy.clear();
  whole.backward_time = {{1410, 0.02}};
  whole.backward_energy = {{1410, 4.0}};
  EXPECT_FALSE(ToJson(whole).contains("backward_input_time"));
  EXPECT_FALSE(ToJson(whole).contains("backward_weight_energy"));

  // Both the whole backward and the split at one frequency: both kept.
  json both = split;
  both["backward_time"] = {{"1410", 0.021}};
  both["backward_energy"] = {{"1410", 4.1}};
  auto kept = RankProfileFromJson(both);
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  EXPECT_EQ(kept->backward_time.at(1410), 0.021);
  EXPECT_EQ(kept->backward_input_time.at(1410), 0.008);

  auto error = [](const json& j) { return RankProfileFromJson(j).error().message; };
  json missing = split;
  missing.erase("backward_weight_energy");
  EXPECT_EQ(error(missing), "field 'backward_weight_energy' is required");
  json no_backward = split;
  for (const char* name :
       {"backward_input_time", "backward_input_energy", "backward_weight_time", "backward_weight_energy"}) {
    no_backward.erase(name);
  }
  EXPECT_EQ(error(no_backward), "field 'backward_time' is required");
  json other_keys = split;
  other_keys["backward_weight_time"].erase("900");
  other_keys["backward_weight_energy"].erase("900");
  EXPECT_EQ(error(other_keys),
            "fields 'backward_input_time' and 'backward_weight_time' must have the same frequencies (each frequency "
            "of a split backward needs both its passes)");
  json energy_keys = split;
  energy_keys["backward_input_energy"].erase("900");
  EXPECT_EQ(error(energy_keys),
            "fields 'backward_input_time' and 'backward_input_energy' must have the same frequencies");
  json negative = split;
  negative["backward_input_time"]["900"] = -0.1;
  EXPECT_EQ(error(negative), "field 'backward_input_time.900': must not be negative");
  json key = split;
  key["backward_weight_time"] = {{"fast", 0.01}};
  EXPECT_NE(error(key).find("field 'backward_weight_time': key 'fast' is not a frequency"), std::string::npos);
  json not_object = split;
  not_object["backward_input_energy"] = json::array();
  EXPECT_NE(error(not_object).find("field 'backward_input_energy': expected an object"), std::string::npos);
  json empty = split;
  for (const char* name :
       {"backward_input_time", "backward_input_energy", "backward_weight_time", "backward_weight_energy"}) {
    empty[name] = json::object();
  }
  EXPECT_EQ(error(empty), "field 'backward_input_time' must hold at least one frequency");
  json half_whole = split;
  half_whole["backward_time"] = {{"1410", 0.02}};
  EXPECT_EQ(error(half_whole), "field 'backward_energy' is required");
}

TEST(HttpApi, StragglerReportNeedsExactlyOneKind) {
  EXPECT_TRUE(StragglerReportFromJson(json::parse(R"({"dp_rank": 1, "slowdown": 1.2})")).ok());
  EXPECT_TRUE(StragglerReportFromJson(json::parse(R"({"dp_rank": 1, "recovered": true})")).ok());
  EXPECT_FALSE(StragglerReportFromJson(json::parse(R"({"dp_rank": 1})")).ok());
  EXPECT_FALSE(StragglerReportFromJson(json::parse(R"({"dp_rank": 1, "slowdown": 1.2, "iteration_time_s": 3})")).ok());
  EXPECT_FALSE(StragglerReportFromJson(json::parse(R"({"dp_rank": 1, "slowdown": 0.5})")).ok());
}

TEST(HttpApi, PlanSelectionRoundTrips) {
  for (const char* text :
       {R"({"point": "fastest"})", R"({"point": "min_energy"})", R"({"index": 7})", R"({"iteration_time_s": 2.5})"}) {
    auto sel = PlanSelectionFromJson(json::parse(text));
    ASSERT_TRUE(sel.ok()) << text;
    EXPECT_EQ(sel->ToJson(), json::parse(text));
  }
  EXPECT_FALSE(PlanSelectionFromJson(json::parse(R"({"point": "slowest"})")).ok());
}

TEST(HttpApi, ADeadlineScheduleNeedsIterationsAndADeadlineAndNamesABadField) {
  auto ok = DeadlineScheduleSpec::FromJson(
      json::parse(R"({"iterations": 1000, "deadline": "2026-12-14T16:48Z", "price_csv": "time,price\n100,0.1\n"})"));
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->pipelines, 0);
  EXPECT_DOUBLE_EQ(ok->replan_margin, 0.02);
  EXPECT_EQ(*DeadlineScheduleSpec::FromJson(ok->ToJson()), *ok);
  const std::pair<const char*, const char*> bad[] = {
      {R"({"deadline": "2026-12-14T16:48Z"})", "field 'iterations' is required"},
      {R"({"iterations": 0, "deadline": "2026-12-14T16:48Z"})", "field 'iterations': expected 1 to 1e12"},
      {R"({"iterations": 10})", "field 'deadline' is required"},
      {R"({"iterations": 10, "deadline": "x", "objective": "money"})", "field 'objective': expected"},
      {R"({"iterations": 10, "deadline": "x", "budget_power": "max"})", "field 'budget_power': expected"},
      {R"({"iterations": 10, "deadline": "x", "price_csv": 3})", "field 'price_csv': expected a string"},
      {R"({"iterations": 10, "deadline": "x", "replan_margin": 0})", "field 'replan_margin': expected a share"},
      {R"({"iterations": 10, "deadline": "x", "pipelines": -1})", "field 'pipelines'"},
      {R"({"iterations": 10, "deadline": "x", "prices": ""})", "prices"},
      // Before: an empty price_csv answered 200 and silently planned for energy.
      {R"({"iterations": 10, "deadline": "x", "price_csv": ""})", "field 'price_csv': expected text, got an empty"},
      {R"({"iterations": 10, "deadline": "x", "power_budget_csv": ""})", "field 'power_budget_csv': expected text"},
  };
  for (const auto& [body, message] : bad) {
    auto r = DeadlineScheduleSpec::FromJson(json::parse(body));
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_NE(r.error().message.find(message), std::string::npos) << r.error().message;
  }
  // A request may not set what the server sets, nor 0 pipelines; the stored spec has them.
  const std::pair<const char*, const char*> request_only[] = {
      {R"({"iterations": 10, "deadline": "2026-12-14T16:48Z", "from_step": 5})",
       "field 'from_step': set by the server"},
      {R"({"iterations": 10, "deadline": "2026-12-14T16:48Z", "replans": 1})", "field 'replans': set by the server"},
      {R"({"iterations": 10, "deadline": "2026-12-14T16:48Z", "pipelines": 0})",
       "field 'pipelines': expected 1 to 100000"},
      // Before: taken as UTC without a word, hours off for a user who meant local time.
      {R"({"iterations": 10, "deadline": "2026-12-14T16:48"})",
       "field 'deadline': '2026-12-14T16:48' has no time zone: write '2026-12-14T16:48Z' for UTC"},
      {R"({"iterations": 10, "deadline": "2026-12-14T16:48Z", "start": "2026-12-07 00:00"})",
       "field 'start': '2026-12-07 00:00' has no time zone"},
  };
  for (const auto& [body, message] : request_only) {
    EXPECT_TRUE(DeadlineScheduleSpec::FromJson(json::parse(body)).ok()) << body;
    auto r = DeadlineScheduleSpec::FromRequestJson(json::parse(body));
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_NE(r.error().message.find(message), std::string::npos) << r.error().message;
  }
  EXPECT_TRUE(
      DeadlineScheduleSpec::FromRequestJson(json::parse(R"({"iterations": 10, "deadline": "2026-12-14T16:48+01:00"})"))
          .ok());
}

TEST(HttpApi, PowerTargetNeedsExactlyOneKindOfPositiveWatts) {
  auto peak = PowerTargetFromJson(json::parse(R"({"peak_power_per_gpu_w": 310.5, "reason": "row 7 at 95 %"})"));
  ASSERT_TRUE(peak.ok()) << peak.error().message;
  EXPECT_EQ(peak->kind, PowerTarget::Kind::kPeak1s);
  EXPECT_EQ(peak->per_gpu_w, 310.5);
  EXPECT_EQ(peak->reason, "row 7 at 95 %");
  EXPECT_EQ(peak->ToJson(), json::parse(R"({"peak_power_per_gpu_w": 310.5, "reason": "row 7 at 95 %"})"));
  auto avg = PowerTargetFromJson(json::parse(R"({"avg_power_per_gpu_w": 250})"));
  ASSERT_TRUE(avg.ok());
  EXPECT_EQ(avg->kind, PowerTarget::Kind::kAverage);
  EXPECT_STREQ(avg->KindName(), "average");
  EXPECT_EQ(avg->ToJson(), json::parse(R"({"avg_power_per_gpu_w": 250})"));
  auto leased = PowerTargetFromJson(json::parse(R"({"peak_power_per_gpu_w": 300, "lease_s": 30})"));
  ASSERT_TRUE(leased.ok()) << leased.error().message;
  EXPECT_EQ(leased->lease_s, 30);
  EXPECT_EQ(leased->expires_at_unix_s, 0) << "the server sets it";

  const std::pair<const char*, const char*> bad[] = {
      {R"({})", "exactly one of 'peak_power_per_gpu_w'"},
      {R"({"peak_power_per_gpu_w": 300, "avg_power_per_gpu_w": 200})", "exactly one"},
      {R"({"peak_power_per_gpu_w": 0})", "expected watts > 0, got 0"},
      {R"({"avg_power_per_gpu_w": -5})", "expected watts > 0, got -5"},
      {R"({"peak_power_per_gpu_w": "300"})", "field 'peak_power_per_gpu_w': expected a number, got string"},
      {R"({"peak_power_per_gpu_w": 300, "reason": 7})", "field 'reason': expected a string"},
      {R"([300])", "power target: expected a JSON object"},
      {R"({"peak_power_per_gpu_w": 300, "lease_s": 0.5})", "field 'lease_s': expected seconds in [1, 86400], got 0.5"},
      {R"({"peak_power_per_gpu_w": 300, "lease_s": 90000})", "field 'lease_s': expected seconds in [1, 86400]"},
      {R"({"peak_power_per_gpu_w": 300, "lease_s": "30"})", "field 'lease_s': expected a number"},
  };
  for (const auto& [text, expected] : bad) {
    auto parsed = PowerTargetFromJson(json::parse(text));
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument) << text;
    EXPECT_NE(parsed.error().message.find(expected), std::string::npos) << text << ": " << parsed.error().message;
  }
  auto huge = PowerTargetFromJson(json{{"peak_power_per_gpu_w", 1e308 * 10}});
  EXPECT_FALSE(huge.ok());
  auto long_reason = PowerTargetFromJson(json{{"avg_power_per_gpu_w", 200}, {"reason", std::string(513, 'x')}});
  ASSERT_FALSE(long_reason.ok());
  EXPECT_NE(long_reason.error().message.find("at most 512 bytes"), std::string::npos);
}

TEST(HttpApi, CostModelIsSpelledAsInTheCli) {
  for (const char* name : {"convex-hull", "convex_hull"}) {  // the second: the spelling until 2026-12
    auto s = PlannerSettingsFromJson(json{{"cost_model", name}});
    ASSERT_TRUE(s.ok()) << name << ": " << s.error().message;
    EXPECT_EQ(s->cost_model, CostModelKind::kConvexHull) << name;
    EXPECT_EQ(ToJson(*s)["cost_model"], "convex-hull");
  }
  auto e = PlannerSettingsFromJson(json{{"cost_model", "exponential"}});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(ToJson(*e)["cost_model"], "exponential");
  auto bad = PlannerSettingsFromJson(json{{"cost_model", "cubic"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("expected \"exponential\" or \"convex-hull\""), std::string::npos)
      << bad.error().message;
}

// What ToJson writes is what the store keeps and a restart reads back with PlannerSettingsFromJson:
// every settings value the API accepts must come back the same, "not set yet" included.
TEST(HttpApi, PlannerSettingsReadBackWhatTheyWrite) {
  PlannerSettings unset;  // num_microbatches 0: a job registered without it
  std::vector<PlannerSettings> all = {unset};
  PlannerSettings set;
  set.num_microbatches = 12;
  set.schedule = PipelineScheduleKind::kGPipe;
  set.virtual_stages = 1;
  set.unit_time_s = 0.002;
  set.p2p_power_w = 83.5;
  all.push_back(set);
  for (const PlannerSettings& settings : all) {
    auto back = PlannerSettingsFromJson(ToJson(settings));
    ASSERT_TRUE(back.ok()) << ToJson(settings).dump() << ": " << back.error().message;
    EXPECT_EQ(ToJson(*back), ToJson(settings));
  }
  EXPECT_TRUE(ToJson(unset)["num_microbatches"].is_null());
}

// A misspelt field was a target with no lease ("lease" for "lease_s": it never lapsed); a field
// given twice was whichever the parser kept. Both are refused where the body comes in.
TEST(HttpApi, PowerTargetsPlansAndStragglersRefuseUnknownFieldsAndEveryBodyDuplicateKeys) {
  auto target = PowerTargetFromJson(json{{"peak_power_per_gpu_w", 300}, {"lease", 30}});
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(target.error().message.rfind("unknown field 'lease'; expected only peak_power_per_gpu_w", 0), 0u)
      << target.error().message;
  EXPECT_TRUE(PowerTargetFromJson(json{{"peak_power_per_gpu_w", 300}, {"lease_s", 30}}).ok());
  auto plan = PlanSelectionFromJson(json{{"point", "fastest"}, {"slowdown", 1.1}});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().message, "unknown field 'slowdown'; expected only point, index, iteration_time_s");
  auto straggler = StragglerReportFromJson(json{{"dp_rank", 0}, {"slowdown", 1.2}, {"rank", 3}});
  ASSERT_FALSE(straggler.ok());
  EXPECT_EQ(straggler.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(straggler.error().message.find("unknown field 'rank'"), std::string::npos);
  // What the store writes still loads (a target with its lease and expiry).
  PowerTarget leased = *PowerTargetFromJson(json{{"avg_power_per_gpu_w", 250}, {"lease_s", 60}, {"reason", "row"}});
  leased.expires_at_unix_s = 1.7e9;
  EXPECT_TRUE(PowerTargetFromJson(leased.ToJson()).ok()) << leased.ToJson().dump();

  auto twice = ParseJsonBody(R"({"peak_power_per_gpu_w": 300, "lease_s": 30, "lease_s": 100000})");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, ErrorCode::kMalformed);
  EXPECT_EQ(twice.error().message, "malformed JSON: field 'lease_s' appears twice");
}

TEST(HttpApi, PlannerSettingsDefaultsAndChecks) {
  auto s = PlannerSettingsFromJson(json::parse(R"({"num_microbatches": 12, "schedule": "gpipe"})"));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->num_microbatches, 12);
  EXPECT_EQ(s->schedule, PipelineScheduleKind::kGPipe);
  EXPECT_DOUBLE_EQ(s->unit_time_s, 0.001);
  EXPECT_FALSE(PlannerSettingsFromJson(json::parse(R"({"schedule": "zigzag"})")).ok());
  EXPECT_FALSE(PlannerSettingsFromJson(json::parse(R"({"unit_time_s": -1})")).ok());
  // The planner's bounds (planning_limits.h), refused when the settings arrive.
  auto many = PlannerSettingsFromJson(json{{"num_microbatches", kMaxMicrobatches + 1}});
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.error().message.find(std::to_string(kMaxMicrobatches)), std::string::npos) << many.error().message;
  EXPECT_TRUE(PlannerSettingsFromJson(json{{"num_microbatches", kMaxMicrobatches}}).ok());
  auto stages = JobRegistrationFromJson(
      json{{"pp_degree", kMaxStages + 1}, {"dp_degree", 1}, {"tp_degree", 1}, {"world_size", kMaxStages + 1}});
  ASSERT_FALSE(stages.ok());
  EXPECT_NE(stages.error().message.find("pp_degree"), std::string::npos);
  // A value quoted in a message carries no control bytes.
  auto escape = PlannerSettingsFromJson(json{{"schedule", "\x1b[2J"}});
  ASSERT_FALSE(escape.ok());
  EXPECT_EQ(escape.error().message.find('\x1b'), std::string::npos) << escape.error().message;
  EXPECT_NE(escape.error().message.find("\\x1b[2J"), std::string::npos) << escape.error().message;
}

TEST(HttpApi, PlannerSettingsNameEverySchedule) {
  auto s = PlannerSettingsFromJson(json{{"num_microbatches", 8}, {"schedule", "interleaved"}, {"virtual_stages", 2}});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->schedule, PipelineScheduleKind::kInterleaved);
  EXPECT_EQ(s->virtual_stages, 2);
  EXPECT_EQ(s->ToPlannerOptions().virtual_stages, 2);
  EXPECT_EQ(ToJson(*s)["virtual_stages"], 2);
  EXPECT_EQ(PlannerSettingsFromJson(ToJson(*s)).value(), *s);
  auto zb = PlannerSettingsFromJson(json{{"schedule", "zbh1"}});
  ASSERT_TRUE(zb.ok()) << zb.error().message;
  EXPECT_EQ(zb->schedule, PipelineScheduleKind::kZeroBubbleH1);
  EXPECT_EQ(zb->virtual_stages, 1);
  auto bad = PlannerSettingsFromJson(json{{"schedule", "zigzag"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "field 'schedule': expected \"1f1b\", \"gpipe\", \"interleaved\" or \"zb-h1\", got \"zigzag\"");
  auto zero = PlannerSettingsFromJson(json{{"virtual_stages", 0}});
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().message.find("virtual_stages"), std::string::npos) << zero.error().message;
}

TEST(HttpApi, QueryIntegers) {
  EXPECT_EQ(*ParseNonNegativeInteger("rank", "12"), 12);
  EXPECT_FALSE(ParseNonNegativeInteger("rank", "-1").ok());
  EXPECT_FALSE(ParseNonNegativeInteger("rank", "1x").ok());
  EXPECT_FALSE(ParseNonNegativeInteger("rank", "").ok());
  EXPECT_FALSE(ParseNonNegativeInteger("rank", "99999999999999999999999").ok());
}

}  // namespace
}  // namespace wattcut::server
