// The planner's output at scale (issue 14): compute + power + default output of the built-in
// A40 model's GPT-3 175B pipeline (8 stages x 96 microbatches at 0.1 ms) and of the Bloom A40
// profile (../shared) at M = 96, 0.1 ms. Not a google-benchmark: one run of each, timed
// phase by phase as `wattcut frontier` runs them, and the ratios to the compute time.
//
//   build/bench/wattcut_frontier_output_bench [--json] [OUT_DIR]
//
// Phases: solve (ComputeFrontier), power (the peak 1-s power of every point:
// plan/frontier_power.h), write (frontier.wattcut + frontier.csv text and files: the
// default --plans none), and with --json the PlanJson text of every point (what --plans json
// adds before writing its files; a minute on these frontiers).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "wattcut/base/shared_data.h"
#include "wattcut/plan/frontier_file.h"
#include "wattcut/plan/frontier_power.h"
#include "wattcut/plan/plan_files.h"
#include "wattcut/plan/planner.h"
#include "wattcut/profile/gpu_model.h"
#include "wattcut/profile/profile_csv.h"

namespace {

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point from) { return std::chrono::duration<double>(Clock::now() - from).count(); }

int Run(const char* label, const wattcut::Profile& profile, const wattcut::PlannerOptions& options,
        const std::filesystem::path& out, bool json) {
  using namespace wattcut;
  auto start = Clock::now();
  Result<PlanningProblem> planning = BuildPlanningProblem(profile, options);
  Result<Frontier> frontier = ComputeFrontier(profile, options);
  if (!planning.ok() || !frontier.ok()) {
    std::fprintf(stderr, "%s: %s\n", label, (planning.ok() ? frontier.error() : planning.error()).message.c_str());
    return 1;
  }
  const double solve_s = Seconds(start);

  // The power sweep on one thread, then as `wattcut frontier` runs it (a thread a core).
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  start = Clock::now();
  Result<FrontierPower> power = FrontierPower::Create(*frontier, planning->problem);
  Status powered = power.ok() ? power->SetPeakPowers(*frontier, kPeakPowerWindowS, 1) : Status(power.error());
  if (!powered.ok()) {
    std::fprintf(stderr, "%s: %s\n", label, powered.error().message.c_str());
    return 1;
  }
  const double power_one_s = Seconds(start);
  start = Clock::now();
  if (Status s = power->SetPeakPowers(*frontier, kPeakPowerWindowS, threads); !s.ok()) return 1;
  const double power_s = Seconds(start);

  start = Clock::now();
  std::filesystem::create_directories(out);
  const std::string compact = FrontierFileText(*frontier);
  const std::string csv = FrontierCsv(*frontier);
  std::ofstream(out / "frontier.wattcut", std::ios::binary) << compact;
  std::ofstream(out / "frontier.csv", std::ios::binary) << csv;
  const double write_s = Seconds(start);

  start = Clock::now();
  size_t json_bytes = 0;
  for (size_t i = 0; json && i < frontier->points().size(); ++i) json_bytes += PlanJson(*frontier, i).size();
  const double json_s = Seconds(start);

  const double points = static_cast<double>(frontier->points().size());
  std::printf(
      "%s: %zu points\n"
      "  solve %.3f s (%.1f us a point), peak power %.3f s on one thread (%.1f us a point, %.1f %% of solve), "
      "%.3f s on %d (%.1f %% of solve)\n"
      "  default output: frontier.wattcut %.2f MB (%.0f bytes a point) + frontier.csv %.2f MB, written in %.3f s "
      "(write/solve %.3f)\n"
      "  end to end (solve + power + write): %.3f s\n",
      label, frontier->points().size(), solve_s, 1e6 * solve_s / points, power_one_s, 1e6 * power_one_s / points,
      100 * power_one_s / solve_s, power_s, threads, 100 * power_s / solve_s, static_cast<double>(compact.size()) / 1e6,
      static_cast<double>(compact.size()) / points, static_cast<double>(csv.size()) / 1e6, write_s, write_s / solve_s,
      solve_s + power_s + write_s);
  if (json) {
    std::printf("  --plans json adds %.0f MB of JSON text (%.3f s to format, before any file is written)\n",
                static_cast<double>(json_bytes) / 1e6, json_s);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace wattcut;
  bool json = false;
  std::filesystem::path out = std::filesystem::temp_directory_path() / "wattcut_output_bench";
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--json") {
      json = true;
    } else {
      out = argv[i];
    }
  }
  PlannerOptions options;
  options.num_microbatches = 96;
  options.unit_time_s = 0.0001;
  options.p2p_power_w = (*FindGpuModel("a40"))->p2p_power_w;
  int failed = Run("GPT-3 175B, built-in A40 model, 8 x 96, 0.1 ms", MakeModelProfile(**FindGpuModel("a40"), 8),
                   options, out / "gpt3-a40", json);
  Result<Profile> bloom = ReadProfileCsv(SharedDataPath("perseus-sosp24/stage_profile/bloom+a40_bf16.csv"), 8);
  if (bloom.ok()) {
    failed |= Run("Bloom 176B, A40 profile, 8 x 96, 0.1 ms", *bloom, options, out / "bloom-a40", json);
  } else {
    std::printf("Bloom A40 profile skipped: %s\n", bloom.error().message.c_str());
  }
  std::filesystem::remove_all(out);
  return failed;
}
