#include "wattcut/server/job_state_codec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace wattcut::server {
namespace {

JobState Sample() {
  JobState state;
  state.completed_rounds = 17;
  state.selection = {PlanSelection::Kind::kIterationTime, 2.5};
  state.stragglers[0] = Straggler{StragglerReport::Kind::kSlowdown, 1.25};
  state.stragglers[3] = Straggler{StragglerReport::Kind::kIterationTime, 0.1 + 0.2};
  state.frontier_attempts = 1;
  state.sweep.active = true;
  state.sweep.freqs_mhz = {1410, 1200, 900};
  state.sweep.step = 1;
  state.sweep.got = {0, 1, 1};
  return state;
}

TEST(JobStateCodec, RoundTrips) {
  JobState state = Sample();
  const std::string text = EncodeJobState(state);
  EXPECT_EQ(nlohmann::json::parse(text)["schema_version"], kJobStateSchemaVersion);
  auto back = DecodeJobState(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->completed_rounds, 17);
  EXPECT_EQ(back->selection.kind, PlanSelection::Kind::kIterationTime);
  EXPECT_EQ(back->selection.value, 2.5);
  ASSERT_EQ(back->stragglers.size(), 2u);
  EXPECT_EQ(back->stragglers.at(0).kind, StragglerReport::Kind::kSlowdown);
  EXPECT_EQ(back->stragglers.at(0).value, 1.25);
  EXPECT_EQ(back->stragglers.at(3).value, 0.1 + 0.2);
  EXPECT_EQ(back->frontier_attempts, 1);
  EXPECT_TRUE(back->sweep.active);
  EXPECT_FALSE(back->sweep.done);
  EXPECT_EQ(back->sweep.freqs_mhz, (std::vector<int>{1410, 1200, 900}));
  EXPECT_EQ(back->sweep.step, 1u);
  EXPECT_EQ(back->sweep.got, (std::vector<uint8_t>{0, 1, 1}));
  EXPECT_EQ(EncodeJobState(*back), text);
}

TEST(JobStateCodec, TheDeploymentVersionAndApplyStepRoundTrip) {
  JobState state = Sample();
  state.deployment_version = 12;
  state.deployment_apply_from_step = 3456;
  auto back = DecodeJobState(EncodeJobState(state));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->deployment_version, 12u);
  EXPECT_EQ(back->deployment_apply_from_step, 3456);
  // Written before deployments: none yet.
  nlohmann::json old = nlohmann::json::parse(EncodeJobState(state));
  old.erase("deployment");
  EXPECT_EQ(DecodeJobState(old.dump())->deployment_version, 0u);
}

// The power target (issue 17): kept as the request gave it; a document from before it has none;
// a damaged one is a corruption naming the field.
TEST(JobStateCodec, ThePowerTargetRoundTripsAndAnOlderDocumentHasNone) {
  JobState state = Sample();
  auto without = DecodeJobState(EncodeJobState(state));
  ASSERT_TRUE(without.ok()) << without.error().message;
  EXPECT_FALSE(without->power_target.has_value());
  EXPECT_FALSE(nlohmann::json::parse(EncodeJobState(state)).contains("power_target"));
  state.power_target = PowerTarget{PowerTarget::Kind::kPeak1s, 287.5, "row 2: 96 % of its budget", 0, 0};
  auto back = DecodeJobState(EncodeJobState(state));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->power_target.has_value());
  EXPECT_EQ(*back->power_target, *state.power_target);

  nlohmann::json damaged = nlohmann::json::parse(EncodeJobState(state));
  damaged["power_target"] = {{"peak_power_per_gpu_w", -1}};
  auto bad = DecodeJobState(damaged.dump());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kCorruption);
  EXPECT_NE(bad.error().message.find("job state: power_target: field 'peak_power_per_gpu_w'"), std::string::npos)
      << bad.error().message;
}

// The deadline schedule (issue 32): its spec round-trips with the step its iterations count
// from and its replans; a document from before it has none; a damaged one is a corruption.
TEST(JobStateCodec, TheDeadlineScheduleSpecRoundTripsAndAnOlderDocumentHasNone) {
  JobState state = Sample();
  EXPECT_FALSE(DecodeJobState(EncodeJobState(state))->deadline_schedule.has_value());
  DeadlineScheduleSpec spec;
  spec.iterations = 214620;
  spec.deadline = "2026-12-14T16:48Z";
  spec.start = "2026-12-07 00:00:00.000000+00:00";
  spec.price_csv = "time,price\n2026-12-07T00:00Z,0.1\n";
  spec.power_budget_csv = "time,watts_per_gpu\n2026-12-07T00:00Z,300\n";
  spec.budget_power = "average";
  spec.pipelines = 4;
  spec.replan_margin = 0.05;
  spec.from_step = 1200;
  spec.replans = 2;
  state.deadline_schedule = spec;
  auto back = DecodeJobState(EncodeJobState(state));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->deadline_schedule.has_value());
  EXPECT_EQ(*back->deadline_schedule, spec);

  nlohmann::json damaged = nlohmann::json::parse(EncodeJobState(state));
  damaged["deadline_schedule"]["iterations"] = 0;
  auto bad = DecodeJobState(damaged.dump());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kCorruption);
  EXPECT_NE(bad.error().message.find("job state: deadline_schedule: field 'iterations'"), std::string::npos)
      << bad.error().message;
}

// What the nodes measured: kept node by node; a document from before it has none; a damaged one
// is a corruption naming the field.
TEST(JobStateCodec, TheMeasuredGpuEnergyRoundTripsAndAnOlderDocumentHasNone) {
  JobState state = Sample();
  EXPECT_FALSE(nlohmann::json::parse(EncodeJobState(state)).contains("measured_gpu_energy"));
  EXPECT_TRUE(DecodeJobState(EncodeJobState(state))->measured_gpu_energy.empty());
  state.measured_gpu_energy["gpu-017"] = NodeGpuEnergy{12345.6, 34.5, {0, 1, 2, 3}, "slurm-epilog"};
  state.measured_gpu_energy["gpu-018"] = NodeGpuEnergy{0.1 + 0.2, 34, {}, ""};
  const std::string text = EncodeJobState(state);
  auto back = DecodeJobState(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->measured_gpu_energy, state.measured_gpu_energy);
  EXPECT_EQ(EncodeJobState(*back), text);

  nlohmann::json damaged = nlohmann::json::parse(text);
  damaged["measured_gpu_energy"]["gpu-017"]["duration_s"] = -1;
  auto bad = DecodeJobState(damaged.dump());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kCorruption);
  EXPECT_NE(bad.error().message.find("job state: measured_gpu_energy: node 'gpu-017': field 'duration_s'"),
            std::string::npos)
      << bad.error().message;
}

TEST(JobStateCodec, ADocumentWithoutAVersionIsVersionOne) {
  // As servers before schema versions wrote it.
  auto old = DecodeJobState(R"({"round":3,"selection":{"point":"fastest"},"stragglers":[],)"
                            R"("profiling":{"active":false,"done":false,"freqs":[],"step":0,"got":[]}})");
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(old->completed_rounds, 3);
  EXPECT_EQ(old->frontier_attempts, 0);
}

TEST(JobStateCodec, ANewerVersionIsRefusedWithAMessage) {
  nlohmann::json doc = nlohmann::json::parse(EncodeJobState(Sample()));
  doc["schema_version"] = kJobStateSchemaVersion + 1;
  auto newer = DecodeJobState(doc.dump());
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.error().code, ErrorCode::kCorruption);
  EXPECT_EQ(newer.error().message,
            "job state: schema_version 2 is newer than this server reads (1); it was written by a newer wattcut: run "
            "that one, or upgrade");
  doc["schema_version"] = "one";
  EXPECT_NE(DecodeJobState(doc.dump()).error().message.find("schema_version must be an integer >= 1"),
            std::string::npos);
}

TEST(JobStateCodec, DamageIsAnErrorNotAnException) {
  for (const char* text : {"", "{", "[]", R"({"round":"x"})", R"({"round":1})",
                           R"({"round":-1,"selection":{"point":"fastest"},"stragglers":[],"profiling":{}})"}) {
    auto read = DecodeJobState(text);
    ASSERT_FALSE(read.ok()) << text;
    EXPECT_EQ(read.error().code, ErrorCode::kCorruption) << text;
    EXPECT_EQ(read.error().message.rfind("job state: ", 0), 0u) << read.error().message;
  }
}

StoredJob StoredSample() {
  StoredJob s;
  s.job_id = "job-1";
  s.info_json = R"({"pp_degree":2,"dp_degree":1,"tp_degree":1,"world_size":2})";
  s.planner_json = R"({"num_microbatches":4})";
  s.state_json = EncodeJobState(Sample());
  s.ranks = {{0, R"({"rank":0,"dp_rank":0,"pp_rank":0,"tp_rank":0,"available_frequencies":[1410,900]})"},
             {1, R"({"rank":1,"dp_rank":0,"pp_rank":1,"tp_rank":0,"available_frequencies":[1410,900]})"}};
  s.rank_profiles = {{1,
                      R"({"rank":1,"dp_rank":0,"pp_rank":1,"tp_rank":0,"forward_time":{"1410":0.1},)"
                      R"("forward_energy":{"1410":10},"backward_time":{"1410":0.2},"backward_energy":{"1410":20}})"}};
  s.results = {{0, "{}"}};
  return s;
}

TEST(JobStateCodec, AStoredJobDecodes) {
  auto job = DecodeStoredJob(StoredSample());
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_EQ(job->info.job_id, "job-1");
  EXPECT_EQ(job->info.world_size, 2);
  EXPECT_EQ(job->planner.num_microbatches, 4);
  ASSERT_EQ(job->ranks.size(), 2u);
  EXPECT_TRUE(job->ranks[0] && job->ranks[1]);
  EXPECT_FALSE(job->rank_profiles[0]);
  ASSERT_TRUE(job->rank_profiles[1]);
  EXPECT_EQ(job->rank_profiles[1]->backward_energy.at(1410), 20);
  EXPECT_EQ(job->has_result, (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(job->state.completed_rounds, 17);
}

// A zero-bubble rank's profile keeps its B and W through the store; a row stored before
// the split existed (StoredSample's) still decodes, without a split.
TEST(JobStateCodec, ASplitBackwardRankProfileRoundTrips) {
  RankProfile split;
  split.rank = 0;
  split.forward_time = {{1410, 0.1}};
  split.forward_energy = {{1410, 10}};
  split.backward_input_time = {{1410, 0.08}};
  split.backward_input_energy = {{1410, 8}};
  split.backward_weight_time = {{1410, 0.12}};
  split.backward_weight_energy = {{1410, 12}};
  StoredJob s = StoredSample();
  s.rank_profiles.emplace_back(0, ToJson(split).dump());
  auto job = DecodeStoredJob(s);
  ASSERT_TRUE(job.ok()) << job.error().message;
  ASSERT_TRUE(job->rank_profiles[0]);
  EXPECT_EQ(job->rank_profiles[0]->backward_input_time, split.backward_input_time);
  EXPECT_EQ(job->rank_profiles[0]->backward_input_energy, split.backward_input_energy);
  EXPECT_EQ(job->rank_profiles[0]->backward_weight_time, split.backward_weight_time);
  EXPECT_EQ(job->rank_profiles[0]->backward_weight_energy, split.backward_weight_energy);
  EXPECT_TRUE(job->rank_profiles[0]->backward_time.empty());
  ASSERT_TRUE(job->rank_profiles[1]);
  EXPECT_FALSE(job->rank_profiles[1]->has_split_backward());
  EXPECT_EQ(job->rank_profiles[1]->backward_time.at(1410), 0.2);
}

TEST(JobStateCodec, ABrokenRowNamesItself) {
  StoredJob mislabelled = StoredSample();
  mislabelled.ranks[1].first = 5;
  EXPECT_EQ(DecodeStoredJob(mislabelled).error().message, "rank row 5 is out of range or mislabelled");
  StoredJob corrupt = StoredSample();
  corrupt.rank_profiles[0].second = "{\"rank\":";
  auto read = DecodeStoredJob(corrupt);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message.rfind("rank profile 1: corrupt stored JSON: ", 0), 0u) << read.error().message;
  StoredJob info = StoredSample();
  info.info_json = R"({"pp_degree":0})";
  EXPECT_EQ(DecodeStoredJob(info).error().message.rfind("job info: ", 0), 0u);
  StoredJob state = StoredSample();
  state.state_json = "";
  EXPECT_EQ(DecodeStoredJob(state).error().code, ErrorCode::kCorruption);
}

}  // namespace
}  // namespace wattcut::server
