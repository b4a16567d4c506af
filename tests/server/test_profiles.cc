#include "tests/server/test_profiles.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "wattcut/profile/gpu_model.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut::testing {

std::vector<int> TestFrequencies(int floor_mhz) {
  auto model = FindGpuModel("a100-sxm");
  std::vector<int> out;
  for (int f = (*model)->max_freq_mhz; f >= floor_mhz; f -= (*model)->freq_step_mhz) out.push_back(f);
  return out;
}

std::string TestProfileCsv(int stages, int floor_mhz) {
  auto model = FindGpuModel("a100-sxm");
  return ProfileCsvText(MakeModelProfile(**model, stages, floor_mhz));
}

PlannerOptions TestPlannerOptions(int microbatches) {
  auto model = FindGpuModel("a100-sxm");
  PlannerOptions options;
  options.num_microbatches = microbatches;
  options.p2p_power_w = (*model)->p2p_power_w;
  return options;
}

Frontier TestFrontier(int stages, int microbatches, int floor_mhz) {
  auto profile = ParseProfileCsv(TestProfileCsv(stages, floor_mhz), "test profile", stages);
  if (!profile) throw std::runtime_error(profile.error().message);
  auto frontier = ComputeFrontier(*profile, TestPlannerOptions(microbatches));
  if (!frontier) throw std::runtime_error(frontier.error().message);
  return std::move(*frontier);
}

std::string StageScheduleJson(const Frontier& frontier, size_t index, int stage) {
  FrequencyPlan plan = frontier.PlanAt(index);
  nlohmann::json out = nlohmann::json::array();
  for (const PlannedComputation& c : plan.stages.at(static_cast<size_t>(stage))) {
    out.push_back({std::string(InstructionName(c.kind)), c.freq_mhz});
  }
  return out.dump();
}

}  // namespace wattcut::testing
