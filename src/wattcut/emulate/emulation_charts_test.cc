#include "wattcut/emulate/emulation_charts.h"

#include <gtest/gtest.h>

#include "wattcut/plan/planner.h"
#include "wattcut/profile/gpu_model.h"

namespace wattcut {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(EmulationCharts, PicturesNameWhatTheyShow) {
  const GpuModel* model = *FindGpuModel("a100-sxm");
  Profile profile = MakeModelProfile(*model, 3);
  PlannerOptions options;
  options.num_microbatches = 4;
  options.p2p_power_w = model->p2p_power_w;
  Frontier frontier = *ComputeFrontier(profile, options);
  EnvPipePlan envpipe = PlanEnvPipe(profile, frontier.setup().schedule, options.p2p_power_w);
  EmulationSetup setup;
  setup.num_pipelines = 4;
  setup.p2p_power_w = options.p2p_power_w;
  setup.slowdowns = {1.0, 1.1, 1.2};
  EmulationResult result = *EmulateStragglers(profile, frontier, envpipe, setup);

  std::string frontier_svg = FrontierChartSvg(frontier, result, 1, 1, "F");
  EXPECT_NE(frontier_svg.find("<svg"), std::string::npos);
  for (const char* label : {"AllMax", "EnvPipe", "T_min", "T*", "Perseus frontier"}) {
    EXPECT_NE(frontier_svg.find(label), std::string::npos) << label;
  }
  std::string savings_svg = SavingsChartSvg(result, "S");
  for (const char* method : {"perseus", "perseus-intrinsic", "envpipe", "zeus-global"}) {
    EXPECT_NE(savings_svg.find(method), std::string::npos) << method;
  }
  std::string timeline_svg = PlanTimelineSvg(frontier, frontier.fastest_index(), 1, "T");
  for (int s = 0; s < 3; ++s) EXPECT_NE(timeline_svg.find("stage " + std::to_string(s)), std::string::npos);
  EXPECT_NE(timeline_svg.find("SM frequency (MHz)"), std::string::npos);
  // One box per computation, each with its label and frequency in the tooltip.
  const FrequencyPlan plan = frontier.PlanAt(frontier.fastest_index());
  EXPECT_GE(Count(timeline_svg, "</title>"), 3u * 2 * 4);
  EXPECT_NE(timeline_svg.find("F0: "), std::string::npos);
  EXPECT_NE(timeline_svg.find("(" + std::to_string(plan.stages[0][0].freq_mhz) + ")</title>"), std::string::npos);
  EXPECT_NE(timeline_svg.find("</svg>"), std::string::npos);
}

}  // namespace
}  // namespace wattcut
