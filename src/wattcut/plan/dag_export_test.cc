#include "wattcut/plan/dag_export.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "wattcut/plan/dag_problem.h"
#include "wattcut/profile/gpu_model.h"

namespace wattcut {
namespace {

Profile ModelProfile(int stages) {
  Result<const GpuModel*> model = FindGpuModel("a100-sxm");
  EXPECT_TRUE(model.ok());
  return MakeModelProfile(**model, stages);
}

struct Case {
  PipelineScheduleKind schedule;
  int profile_stages, microbatches, virtual_stages;
  CostModelKind cost_model;
};

// A pipeline written as a DAG file and planned as a generic DAG gives the pipeline
// planner's frontier: the same times, energies and frequencies at every point.
TEST(DagExport, TheExportedDagPlansToThePipelinesFrontier) {
  const std::vector<Case> cases = {
      {PipelineScheduleKind::k1F1B, 4, 6, 1, CostModelKind::kExponential},
      {PipelineScheduleKind::kGPipe, 3, 4, 1, CostModelKind::kConvexHull},
      {PipelineScheduleKind::kInterleaved, 8, 4, 2, CostModelKind::kExponential},
      {PipelineScheduleKind::kZeroBubbleH1, 4, 4, 1, CostModelKind::kConvexHull},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(PipelineScheduleName(c.schedule)));
    const Profile profile = ModelProfile(c.profile_stages);
    PlannerOptions options;
    options.schedule = c.schedule;
    options.num_microbatches = c.microbatches;
    options.virtual_stages = c.virtual_stages;
    options.p2p_power_w = 71.5;
    options.cost_model = c.cost_model;
    Result<Frontier> pipeline = ComputeFrontier(profile, options);
    ASSERT_TRUE(pipeline.ok()) << pipeline.error().message;

    Result<std::string> text = PipelineDagText(profile, options);
    ASSERT_TRUE(text.ok()) << text.error().message;
    Result<GenericDag> dag = ParseDag(*text, "exported.json");
    ASSERT_TRUE(dag.ok()) << dag.error().message;
    DagPlannerOptions dag_options;
    dag_options.unit_time_s = DagUnitTime(*dag, std::nullopt, 1.0);
    dag_options.noise_factor = options.noise_factor;
    dag_options.cost_model = c.cost_model;
    EXPECT_EQ(dag_options.unit_time_s, options.unit_time_s);
    Result<DagFrontier> generic = ComputeDagFrontier(*dag, dag_options);
    ASSERT_TRUE(generic.ok()) << generic.error().message;

    ASSERT_EQ(generic->points().size(), pipeline->points().size());
    ASSERT_GT(pipeline->points().size(), 10u);
    for (size_t i = 0; i < pipeline->points().size(); ++i) {
      SCOPED_TRACE("point " + std::to_string(i));
      const FrontierPoint& p = pipeline->points()[i];
      const FrontierPoint& g = generic->points()[i];
      ASSERT_EQ(g.duration_units, p.duration_units);
      ASSERT_EQ(g.time_s, p.time_s);
      ASSERT_NEAR(g.effective_energy_j, p.effective_energy_j, 1e-9 * std::abs(p.effective_energy_j));
      ASSERT_NEAR(g.energy_j, p.energy_j, 1e-9 * p.energy_j);
      // Operation k is the planner's computation k (device-major, schedule order).
      std::vector<int> freqs;
      for (const auto& stage : pipeline->PlanAt(i).stages) {
        for (const PlannedComputation& computation : stage) freqs.push_back(computation.freq_mhz);
      }
      ASSERT_EQ(generic->KnobsAt(i), freqs);
    }
  }
}

TEST(DagExport, OperationsAreNamedByInstructionDeviceChunkAndMicrobatch) {
  PlannerOptions options;
  options.schedule = PipelineScheduleKind::kZeroBubbleH1;
  options.num_microbatches = 2;
  options.p2p_power_w = 60;
  Result<GenericDag> dag = PipelineDag(ModelProfile(2), options);
  ASSERT_TRUE(dag.ok()) << dag.error().message;
  ASSERT_EQ(dag->operations.size(), 2u * 2 * 3);
  EXPECT_EQ(dag->operations[0].name, "forward d0 c0 m0");
  ASSERT_EQ(dag->devices.size(), 2u);
  EXPECT_EQ(dag->devices[1].name, "d1");
  EXPECT_EQ(dag->devices[1].blocking_power_w, 60);
  EXPECT_EQ(dag->unit_time_s, 0.001);
  std::vector<std::string> names;
  for (const DagOperation& op : dag->operations) names.push_back(op.name);
  for (const char* name : {"backward_input d1 c0 m1", "backward_weight d0 c0 m0", "forward d1 c0 m1"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  // The split backward's halves, with the profile's frequencies as knobs.
  const Profile profile = ModelProfile(2);
  for (const DagOperation& op : dag->operations) {
    EXPECT_EQ(op.options.size(), profile.measurements(0, InstructionKind::kForward).size()) << op.name;
    EXPECT_EQ(op.options.front().knob, profile.measurements(0, InstructionKind::kForward).front().freq_mhz);
  }
}

TEST(DagExport, RefusesWhatThePlannerRefuses) {
  PlannerOptions options;
  options.num_microbatches = 0;
  Result<GenericDag> dag = PipelineDag(ModelProfile(2), options);
  ASSERT_FALSE(dag.ok());
  EXPECT_EQ(dag.error().message, BuildPlanningProblem(ModelProfile(2), options).error().message);
}

}  // namespace
}  // namespace wattcut
