#include "wattcut/plan/planner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/shared_data_testing.h"
#include "wattcut/plan/frontier_file.h"
#include "wattcut/plan/plan_files.h"
#include "wattcut/profile/chunk_split.h"
#include "wattcut/profile/gpu_model.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut {
namespace {

constexpr double kA100BlockingPowerW = 83.64;

PlannerOptions Gpt3Options(int microbatches) {
  PlannerOptions options;
  options.num_microbatches = microbatches;
  options.p2p_power_w = kA100BlockingPowerW;
  return options;
}

TEST(Planner, MatchesReferenceFrontierOnGpt3A100) {
  WATTCUT_REQUIRE_SHARED_FILE(profile_path, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  WATTCUT_REQUIRE_SHARED_FILE(reference_path, "perseus-sosp24/iteration_time_energy/a100_sxm/gpt3-175b_bf16_mb12.csv");
  Result<Profile> profile = ReadProfileCsv(profile_path, 8);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  Result<Frontier> frontier = ComputeFrontier(*profile, Gpt3Options(12));
  ASSERT_TRUE(frontier.ok()) << frontier.error().message;

  Result<CsvTable> reference = CsvTable::Read(reference_path);
  ASSERT_TRUE(reference.ok());
  std::map<int64_t, double> reference_energy;  // time in ms -> energy
  for (const CsvRow& row : reference->rows()) {
    reference_energy[std::llround(*reference->number(row, 0) * 1000)] = *reference->number(row, 1);
  }
  ASSERT_EQ(reference_energy.size(), 639u);

  std::map<int64_t, double> ours;
  for (const FrontierPoint& p : frontier->points()) ours[p.duration_units] = p.energy_j;
  // Same span: 2.818 s .. 3.456 s, plus our all-slowest start point one unit above.
  EXPECT_EQ(ours.begin()->first, 2818);
  EXPECT_EQ(reference_energy.begin()->first, 2818);
  EXPECT_EQ(ours.rbegin()->first, 3457);
  EXPECT_EQ(frontier->points().size(), 640u);
  double worst = 0;
  for (const auto& [t, e] : reference_energy) {
    ASSERT_TRUE(ours.count(t)) << "no frontier point at " << t << " ms";
    worst = std::max(worst, std::fabs(ours[t] - e) / e);
  }
  EXPECT_LT(worst, 0.005) << "largest relative energy difference from the reference";
  RecordProperty("worst_relative_difference", std::to_string(worst));
}

// A small two-stage profile: three frequencies per (stage, instruction), times scaled by
// `time_scale`.
Profile SmallProfile(double time_scale, double energy_scale = 1.0) {
  Profile profile(2);
  for (int s = 0; s < 2; ++s) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      const double t = kind == InstructionKind::kForward ? 0.05 : 0.09;
      profile.mutable_measurements(s, kind) = {{1410, t * time_scale, 24 * energy_scale},
                                               {1200, 1.2 * t * time_scale, 21 * energy_scale},
                                               {1000, 1.5 * t * time_scale, 19 * energy_scale}};
    }
  }
  return profile;
}

PlannerOptions SmallOptions(int microbatches = 4) {
  PlannerOptions options;
  options.num_microbatches = microbatches;
  options.p2p_power_w = 80;
  options.cost_model = CostModelKind::kConvexHull;
  return options;
}

TEST(Planner, SmallProfilePlans) {
  Result<Frontier> frontier = ComputeFrontier(SmallProfile(1), SmallOptions());
  ASSERT_TRUE(frontier.ok()) << frontier.error().message;
  EXPECT_GT(frontier->points().size(), 10u);
}

// The pipeline's shape is checked before a schedule is built (30,000 microbatches on 8
// stages crashed the solver; 100,000 stages too).
TEST(Planner, RefusesPipelinesOverTheLimitsBeforeBuildingThem) {
  Result<PlanningProblem> microbatches = BuildPlanningProblem(SmallProfile(1), SmallOptions(30000));
  ASSERT_FALSE(microbatches.ok());
  EXPECT_EQ(microbatches.error().message, "microbatches must be in [1, 16384], got 30000");
  Result<PlanningProblem> none = BuildPlanningProblem(SmallProfile(1), SmallOptions(0));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "microbatches must be in [1, 16384], got 0");
  Profile wide(100000);
  for (int s = 0; s < wide.num_stages(); ++s) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      wide.mutable_measurements(s, kind) = {{1410, 0.05, 20}};
    }
  }
  Result<PlanningProblem> stages = BuildPlanningProblem(wide, SmallOptions(4));
  ASSERT_FALSE(stages.ok());
  EXPECT_EQ(stages.error().message, "pipeline stages must be in [1, 1024], got 100000");
  // 2 stages x 16384 microbatches: within the limits (one option per pair, so one point).
  Profile fixed(2);
  for (int s = 0; s < 2; ++s) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      fixed.mutable_measurements(s, kind) = {{1410, 0.05, 20}};
    }
  }
  Result<PlanningProblem> most = BuildPlanningProblem(fixed, SmallOptions(16384));
  ASSERT_TRUE(most.ok()) << most.error().message;
  EXPECT_EQ(most->problem.num_activities(), 2 * 2 * 16384);
}

// Times x 1e9 (or a unit time of 1e-9 s) once allocated many GB of cost tables before a
// check ran; now the table size is known from the quantised durations first.
TEST(Planner, RefusesAUnitTimeTooFineBeforeAllocatingTheTables) {
  PlannerOptions fine = SmallOptions();
  fine.unit_time_s = 1e-9;
  Result<PlanningProblem> problem = BuildPlanningProblem(SmallProfile(1), fine);
  ASSERT_FALSE(problem.ok());
  const std::string& message = problem.error().message;
  EXPECT_EQ(message.rfind("unit_time_s 1e-09 s is too fine for this profile: its cost tables would have ", 0), 0u)
      << message;
  EXPECT_NE(message.find("more than the limit of 16777216; use a unit time of "), std::string::npos) << message;
  Result<PlanningProblem> scaled = BuildPlanningProblem(SmallProfile(1e9), SmallOptions());
  ASSERT_FALSE(scaled.ok());
  EXPECT_NE(scaled.error().message.find("is too fine for this profile"), std::string::npos) << scaled.error().message;
}

// A frontier with more points than the limits allow is refused before solving, with a
// unit time that fits.
TEST(Planner, RefusesAFrontierOverTheLimitsBeforeSolving) {
  PlannerOptions options = SmallOptions(64);
  options.unit_time_s = 1e-6;
  Result<PlanningProblem> fine = BuildPlanningProblem(SmallProfile(1), options);
  ASSERT_FALSE(fine.ok());
  const std::string& message = fine.error().message;
  EXPECT_EQ(message.rfind("the frontier would have up to ", 0), 0u) << message;
  EXPECT_NE(message.find(" points (one per unit time of 1e-06 s between the slowest and the fastest iteration) over "
                         "256 computations; the limits are 1000000 points and points x computations <= 1e+09: use a "
                         "unit time of about "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(" s or coarser, or fewer microbatches"), std::string::npos) << message;
  // So many microbatches that no unit time would do.
  options = SmallOptions(16384);
  options.unit_time_s = 1e-5;
  Result<PlanningProblem> many = BuildPlanningProblem(SmallProfile(1), options);
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.error().message.find(": use fewer microbatches (a unit time coarse enough, about "), std::string::npos)
      << many.error().message;
  EXPECT_NE(many.error().message.find(" s, is longer than the fastest computation, 0.05 s)"), std::string::npos);
}

// Times of 1e308 once quantised to -9223372036854775808 units and gave a NaN frontier; a
// unit time above every time gave a one-point frontier at 0 s.
TEST(Planner, RefusesDurationsThatOverflowOrRoundToZero) {
  Profile huge = SmallProfile(1);
  // Not dominated (the least energy), so it is quantised.
  huge.mutable_measurements(1, InstructionKind::kBackward)[1] = {1200, 1e308, 1.0};
  Result<PlanningProblem> overflow = BuildPlanningProblem(huge, SmallOptions());
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.error().message,
            "stage 1 backward: the time at 1200 MHz (1e+308 s) is inf unit times of 0.001 s, more than the 2^53 a "
            "duration may have: use a coarser unit time");
  PlannerOptions coarse = SmallOptions();
  coarse.unit_time_s = 1e9;
  Result<PlanningProblem> zero = BuildPlanningProblem(SmallProfile(1), coarse);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message,
            "stage 0 forward: the time at 1410 MHz (0.05 s) is shorter than one unit time (1e+09 s) and would "
            "take 0 units: use a unit time of at most 0.05 s");
  Profile tiny = SmallProfile(1);
  tiny.mutable_measurements(0, InstructionKind::kBackward)[0].time_s = 0.0004;
  Result<PlanningProblem> below = BuildPlanningProblem(tiny, SmallOptions());
  ASSERT_FALSE(below.ok());
  EXPECT_EQ(below.error().message.rfind("stage 0 backward: the time at 1410 MHz (0.0004 s) is shorter than one unit "
                                        "time (0.001 s)",
                                        0),
            0u)
      << below.error().message;
}

TEST(Planner, RefusesEnergiesTooLargeToAdd) {
  Result<PlanningProblem> problem = BuildPlanningProblem(SmallProfile(1, 1e300), SmallOptions());
  ASSERT_FALSE(problem.ok());
  EXPECT_EQ(problem.error().message.rfind("the profile's energies are too large to plan with", 0), 0u)
      << problem.error().message;
  PlannerOptions power = SmallOptions();
  power.p2p_power_w = 1e308;
  Result<PlanningProblem> blocking = BuildPlanningProblem(SmallProfile(1), power);
  ASSERT_FALSE(blocking.ok());
  EXPECT_EQ(blocking.error().message.rfind("stage 0 forward: the effective energy at 1410 MHz", 0), 0u)
      << blocking.error().message;
}

TEST(Planner, OptionMessagesNameTheFields) {
  PlannerOptions options = SmallOptions();
  options.unit_time_s = 0;
  EXPECT_EQ(BuildPlanningProblem(SmallProfile(1), options).error().message,
            "unit_time_s must be a positive number of seconds");
  options = SmallOptions();
  options.noise_factor = 2;
  EXPECT_EQ(BuildPlanningProblem(SmallProfile(1), options).error().message, "noise_factor must be in (0, 1]");
  options = SmallOptions();
  options.p2p_power_w = -1;
  EXPECT_EQ(BuildPlanningProblem(SmallProfile(1), options).error().message,
            "p2p_power_w must be a non-negative number of watts");
}

}  // namespace
}  // namespace wattcut

// ---------------------------------------------------------------------------------------
// The interleaved and ZB-H1 schedules through the planner, the frontier file and the plans.

namespace wattcut {
namespace {

// The built-in A100 model's profile of `stages` stages, each cut into `chunks` pieces.
Profile ChunkedModelProfile(int stages, int chunks) {
  Result<const GpuModel*> model = FindGpuModel("a100-sxm");
  EXPECT_TRUE(model.ok());
  Result<Profile> split = SplitStagesIntoChunks(MakeModelProfile(**model, stages), chunks);
  EXPECT_TRUE(split.ok());
  return *split;
}

PlannerOptions ScheduleOptions(PipelineScheduleKind kind, int microbatches, int virtual_stages = 1) {
  PlannerOptions options;
  options.schedule = kind;
  options.num_microbatches = microbatches;
  options.virtual_stages = virtual_stages;
  options.p2p_power_w = kA100BlockingPowerW;
  options.unit_time_s = 0.002;
  return options;
}

void ExpectSamePlans(const Frontier& a, const Frontier& b) {
  ASSERT_EQ(a.points().size(), b.points().size());
  for (size_t i = 0; i < a.points().size(); ++i) {
    FrequencyPlan pa = a.PlanAt(i), pb = b.PlanAt(i);
    ASSERT_EQ(pa.stages.size(), pb.stages.size());
    for (size_t s = 0; s < pa.stages.size(); ++s) {
      ASSERT_EQ(pa.stages[s].size(), pb.stages[s].size());
      for (size_t k = 0; k < pa.stages[s].size(); ++k) {
        const PlannedComputation &x = pa.stages[s][k], &y = pb.stages[s][k];
        ASSERT_TRUE(x.kind == y.kind && x.microbatch == y.microbatch && x.freq_mhz == y.freq_mhz &&
                    x.duration_units == y.duration_units && x.chunk == y.chunk)
            << "point " << i << " stage " << s << " computation " << k;
      }
    }
  }
}

TEST(PlannerSchedules, InterleavedPlansEveryChunkOfEveryDevice) {
  const Profile profile = ChunkedModelProfile(4, 2);  // 4 devices x 2 chunks = 8 pieces
  Result<Frontier> frontier = ComputeFrontier(profile, ScheduleOptions(PipelineScheduleKind::kInterleaved, 8, 2));
  ASSERT_TRUE(frontier.ok()) << frontier.error().message;
  EXPECT_EQ(frontier->num_stages(), 4);
  EXPECT_EQ(frontier->num_computations(), 4 * 2 * 2 * 8);
  const FrequencyPlan plan = frontier->PlanAt(frontier->fastest_index());
  ASSERT_EQ(plan.stages.size(), 4u);
  for (size_t d = 0; d < 4; ++d) {
    int chunk1 = 0;
    for (const PlannedComputation& c : plan.stages[d]) chunk1 += c.chunk == 1 ? 1 : 0;
    EXPECT_EQ(chunk1, 16) << "device " << d << " runs chunk 1's forward and backward of 8 microbatches";
  }
  // Blocking energy counts the 4 devices (GPUs), not the 8 chunks.
  for (const FrontierPoint& p : frontier->points()) {
    EXPECT_NEAR(p.energy_j, p.effective_energy_j + 4 * p.time_s * kA100BlockingPowerW, 1e-6 * p.energy_j);
  }
  // The point of interleaving: a smaller bubble than 1F1B on the same model over 4 devices.
  Result<Frontier> plain = ComputeFrontier(ChunkedModelProfile(4, 1), ScheduleOptions(PipelineScheduleKind::k1F1B, 8));
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_LT(frontier->points().back().time_s, plain->points().back().time_s);
}

TEST(PlannerSchedules, InterleavedRefusesShapesMegatronRefuses) {
  Result<Frontier> not_multiple =
      ComputeFrontier(ChunkedModelProfile(2, 2), ScheduleOptions(PipelineScheduleKind::kInterleaved, 3, 2));
  ASSERT_FALSE(not_multiple.ok());
  EXPECT_EQ(not_multiple.error().message,
            "the interleaved schedule needs the microbatches (3) to be a multiple of the pipeline devices (2), as "
            "Megatron-LM requires");
  Result<Frontier> pieces =
      ComputeFrontier(ChunkedModelProfile(5, 1), ScheduleOptions(PipelineScheduleKind::kInterleaved, 4, 2));
  ASSERT_FALSE(pieces.ok());
  EXPECT_EQ(pieces.error().message,
            "the profile has 5 stages, not a multiple of the 2 virtual stages (the interleaved schedule needs devices "
            "x virtual stages profile stages)");
}

TEST(PlannerSchedules, ZeroBubbleSplitsAMeasuredBackwardInHalves) {
  const Profile profile = ChunkedModelProfile(4, 1);
  const PlannerOptions options = ScheduleOptions(PipelineScheduleKind::kZeroBubbleH1, 8);
  EXPECT_TRUE(PlanSplitsMeasuredBackward(profile, options));
  EXPECT_FALSE(PlanSplitsMeasuredBackward(profile, ScheduleOptions(PipelineScheduleKind::k1F1B, 8)));
  Result<Frontier> frontier = ComputeFrontier(profile, options);
  ASSERT_TRUE(frontier.ok()) << frontier.error().message;
  EXPECT_EQ(frontier->num_computations(), 3 * 4 * 8);
  for (const auto& stage : frontier->PlanAt(0).stages) {
    for (const PlannedComputation& c : stage) EXPECT_NE(c.kind, InstructionKind::kBackward);
  }
  // The same as a profile that measured those halves itself.
  Profile measured = profile;
  for (int s = 0; s < measured.num_stages(); ++s) {
    for (const Measurement& m : profile.measurements(s, InstructionKind::kBackward)) {
      measured.mutable_measurements(s, InstructionKind::kBackwardInput)
          .push_back({m.freq_mhz, m.time_s / 2, m.energy_j / 2});
      measured.mutable_measurements(s, InstructionKind::kBackwardWeight)
          .push_back({m.freq_mhz, m.time_s / 2, m.energy_j / 2});
    }
  }
  EXPECT_FALSE(PlanSplitsMeasuredBackward(measured, options));
  Result<Frontier> same = ComputeFrontier(measured, options);
  ASSERT_TRUE(same.ok()) << same.error().message;
  ExpectSamePlans(*frontier, *same);
  // W passes fill 1F1B's tail bubble: faster than 1F1B at every computation's fastest.
  Result<Frontier> plain = ComputeFrontier(profile, ScheduleOptions(PipelineScheduleKind::k1F1B, 8));
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_LT(frontier->points().back().time_s, plain->points().back().time_s);
}

TEST(PlannerSchedules, ZeroBubbleNeedsABackwardToSplitOrBothPasses) {
  Profile profile = ChunkedModelProfile(2, 1);
  profile.mutable_measurements(1, InstructionKind::kBackward).clear();
  Result<Frontier> frontier = ComputeFrontier(profile, ScheduleOptions(PipelineScheduleKind::kZeroBubbleH1, 4));
  ASSERT_FALSE(frontier.ok());
  EXPECT_EQ(frontier.error().message,
            "stage 1 backward_input: no measurements (a zero-bubble schedule needs backward_input and backward_weight "
            "rows, or backward rows to split in halves)");
}

TEST(PlannerSchedules, FrontierFileV2RoundTripsInterleavedAndZeroBubblePlans) {
  Result<Frontier> interleaved =
      ComputeFrontier(ChunkedModelProfile(2, 2), ScheduleOptions(PipelineScheduleKind::kInterleaved, 4, 2));
  Result<Frontier> zero_bubble =
      ComputeFrontier(ChunkedModelProfile(3, 1), ScheduleOptions(PipelineScheduleKind::kZeroBubbleH1, 5));
  Result<Frontier> plain = ComputeFrontier(ChunkedModelProfile(3, 1), ScheduleOptions(PipelineScheduleKind::k1F1B, 5));
  ASSERT_TRUE(interleaved.ok() && zero_bubble.ok() && plain.ok());
  for (const Frontier* f : {&*interleaved, &*zero_bubble}) {
    const std::string text = FrontierFileText(*f);
    EXPECT_EQ(text.substr(0, text.find('\n')), kFrontierFormatV2);
    Result<Frontier> back = ParseFrontierFile(text, "f.wattcut");
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->setup().schedule, f->setup().schedule);
    ExpectSamePlans(*f, *back);
    EXPECT_EQ(FrontierFileText(*back), text);
  }
  // What v1 can say stays v1.
  const std::string v1 = FrontierFileText(*plain);
  EXPECT_EQ(v1.substr(0, v1.find('\n')), kFrontierFormat);
  EXPECT_EQ(v1.find("backward_input"), std::string::npos);
}

TEST(PlannerSchedules, FrontierFileRefusesWhatItsVersionCannotSay) {
  Result<Frontier> zero_bubble =
      ComputeFrontier(ChunkedModelProfile(2, 1), ScheduleOptions(PipelineScheduleKind::kZeroBubbleH1, 2));
  ASSERT_TRUE(zero_bubble.ok());
  std::string text = FrontierFileText(*zero_bubble);
  // A v2 file relabelled v1: its chunks line is not what v1 expects.
  std::string relabelled = std::string(kFrontierFormat) + text.substr(text.find('\n'));
  Result<Frontier> as_v1 = ParseFrontierFile(relabelled, "f.wattcut");
  ASSERT_FALSE(as_v1.ok());
  EXPECT_EQ(as_v1.error().message, "f.wattcut:5: expected a 'schedule' line, got 'chunks'");
  // A chunk the file does not have.
  const size_t at = text.find("forward:0:0");
  ASSERT_NE(at, std::string::npos);
  std::string bad_chunk = text;
  bad_chunk.replace(at, 11, "forward:0:1");
  Result<Frontier> chunk = ParseFrontierFile(bad_chunk, "f.wattcut");
  ASSERT_FALSE(chunk.ok());
  EXPECT_EQ(chunk.error().message, "f.wattcut:6: schedule: expected a chunk in [0, 1), got 'forward:0:1'");
  // A v1 schedule with the split kinds (v1 has no options for them).
  const std::string v1 =
      std::string(kFrontierFormat) +
      "\nunit_time_s 0.001\np2p_power_w 0\nstages 1\nschedule 0 forward:0 backward_input:0 backward_weight:0\n";
  Result<Frontier> split_v1 = ParseFrontierFile(v1, "f.wattcut");
  ASSERT_FALSE(split_v1.ok());
  EXPECT_EQ(split_v1.error().message,
            "f.wattcut:5: schedule: expected INSTRUCTION:MICROBATCH such as forward:0, got 'backward_input:0'");
}

TEST(PlannerSchedules, PlanJsonNamesTheChunkOfInterleavedComputations) {
  Result<Frontier> interleaved =
      ComputeFrontier(ChunkedModelProfile(2, 2), ScheduleOptions(PipelineScheduleKind::kInterleaved, 2, 2));
  ASSERT_TRUE(interleaved.ok()) << interleaved.error().message;
  const std::string json = PlanJson(*interleaved, 0);
  EXPECT_NE(json.find("[\"forward\",0,"), std::string::npos);
  Result<StoredPlan> stored = ParsePlanJson(json, "p.json");
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  const FrequencyPlan plan = interleaved->PlanAt(0);
  ASSERT_EQ(stored->plan.stages.size(), plan.stages.size());
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    ASSERT_EQ(stored->plan.stages[s].size(), plan.stages[s].size());
    for (size_t k = 0; k < plan.stages[s].size(); ++k) {
      EXPECT_EQ(stored->plan.stages[s][k].chunk, plan.stages[s][k].chunk);
      EXPECT_EQ(stored->plan.stages[s][k].kind, plan.stages[s][k].kind);
    }
  }
  EXPECT_EQ(plan.stages[0][2].chunk, 1);  // device 0: F0 F1 F0.1 ...
  // 1F1B plans keep four elements per computation.
  Result<Frontier> plain = ComputeFrontier(ChunkedModelProfile(2, 1), ScheduleOptions(PipelineScheduleKind::k1F1B, 2));
  ASSERT_TRUE(plain.ok());
  EXPECT_NE(PlanJson(*plain, 0).find("[[[\"forward\",0,"), std::string::npos);
  Result<StoredPlan> five = ParsePlanJson(PlanJson(*interleaved, 0), "p.json");
  ASSERT_TRUE(five.ok());
  Result<StoredPlan> bad = ParsePlanJson(
      R"({"format": "wattcut.frequency_plan/v1", "point": 0, "time_s": 1, "energy_j": 1, "unit_time_s": 0.001,
          "stages": [[["backward_weight", 0, 1410, 5, -1]]]})",
      "p.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "p.json: field 'stages[0][0][4]': expected a chunk >= 0");
}

}  // namespace
}  // namespace wattcut
