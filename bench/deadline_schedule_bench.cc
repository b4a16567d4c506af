// The deadline scheduler at a year of prices (issue 53): `wattcut plan schedule` and the server's
// PUT /v1/jobs/{id}/deadline_schedule on the authors' 640-point GPT-3 175B frontier (A100,
// iteration_time_energy/), with 5-minute prices: a daily cycle from 0.10 to 0.30 per kWh plus a
// seeded random walk of +-0.02 a step, so that no two days are alike. The job has 90 % of what the
// fastest plan does by the deadline. Prints, for each run length, the price rows, the wall time of
// the schedule and the process's peak resident memory after it. Not a google-benchmark: one run
// each, the longest last. ROWS:STEP_S gives another price step (1000000:30, a million 30-second
// prices, the most rows a series may have). Run:
//   build/bench/wattcut_deadline_bench [ROWS[:STEP_S] ...]     (default: 1000 2000 3000 105120)
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <utility>
#include <vector>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/shared_data.h"
#include "wattcut/deadline/deadline_scheduler.h"

namespace {

using wattcut::deadline::JobPlan;
using wattcut::deadline::ScheduleRequest;

constexpr double kStart = 1'796'169'600;  // 2026-12-02T00:00Z
constexpr double kDefaultStepS = 300;

double PeakResidentMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path =
      wattcut::SharedDataPath("perseus-sosp24/iteration_time_energy/a100_sxm/gpt3-175b_bf16_mb12.csv");
  auto table = wattcut::CsvTable::Read(path);
  if (!table.ok()) {
    std::fprintf(stderr, "%s\n", table.error().message.c_str());
    return 1;
  }
  std::vector<JobPlan> plans;
  double fastest_s = 1e9;
  for (const wattcut::CsvRow& row : table->rows()) {
    const double time = *table->number(row, 0), energy = *table->number(row, 1);
    plans.push_back({plans.size(), time, energy / time, energy / time});
    fastest_s = std::min(fastest_s, time);
  }
  std::vector<std::pair<long, double>> sizes;
  for (int i = 1; i < argc; ++i) {
    char* rest = nullptr;
    const long rows = std::strtol(argv[i], &rest, 10);
    sizes.push_back({rows, *rest == ':' ? std::atof(rest + 1) : kDefaultStepS});
  }
  if (sizes.empty())
    sizes = {{1000, kDefaultStepS}, {2000, kDefaultStepS}, {3000, kDefaultStepS}, {105120, kDefaultStepS}};
  std::printf("frontier: %zu points\n", plans.size());
  for (const auto& [rows, kStepS] : sizes) {
    ScheduleRequest r;
    r.plans = plans;
    r.start_s = kStart;
    r.deadline_s = kStart + static_cast<double>(rows) * kStepS;
    r.iterations = std::floor(0.9 * static_cast<double>(rows) * kStepS / fastest_s);
    wattcut::deadline::StepSeries price{"bench-price.csv", "price", {}};
    std::mt19937_64 rng(53);
    std::uniform_real_distribution<double> step(-0.02, 0.02);
    double walk = 0;
    for (long k = 0; k < rows; ++k) {
      const double hour = std::fmod(static_cast<double>(k) * kStepS / 3600, 24);
      walk = std::clamp(walk + step(rng), -0.05, 0.05);
      price.steps.push_back({kStart + static_cast<double>(k) * kStepS,
                             0.20 - 0.10 * std::cos(2 * M_PI * (hour - 3) / 24) + walk, static_cast<int>(k) + 2});
    }
    r.price = std::move(price);
    const auto start = std::chrono::steady_clock::now();
    auto schedule = wattcut::deadline::ScheduleToDeadline(std::move(r));
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!schedule.ok()) {
      std::printf("%7ld rows of %.0f s: %s\n", rows, kStepS, schedule.error().message.c_str());
      continue;
    }
    std::printf(
        "%7ld rows of %.0f s: %8.3f s, peak RSS %7.1f MB, cost %.9f finishing at %.3f s (fastest %.6f, least-energy "
        "%.6f)\n",
        rows, kStepS, wall, PeakResidentMb(), schedule->totals.cost, schedule->totals.finish_s - kStart,
        schedule->fastest.totals.cost, schedule->least_energy.totals.cost);
    std::fflush(stdout);
  }
  return 0;
}
